#!/usr/bin/env bash
# Set up everything the tests need on a fresh machine (Python packages, a Docker engine and the bot
# base images, Go for example_bots/go, Chromium for the site tests, a PostgreSQL server of the
# checkout's own for the store's tests), then run the whole test suite with pytest.
# Usage: scripts/test.sh [pytest args...]
#        scripts/test.sh --setup-only    the set-up alone (.ci/run then starts its pytest runs itself)
# Without root, the Docker and browser set-up is skipped and those tests skip with a reason
# (in CI, where CI=true, they fail instead).
set -euo pipefail
cd "$(dirname "$0")/.."

# The locked versions (requirements/ci.txt, made by scripts/lock.sh): what CI tests is what the lock
# says, not what the index serves today. The project itself, the SDK first (the platform depends on
# it), is installed without its dependencies.
python3 -m pip install --quiet --disable-pip-version-check --require-hashes -r requirements/ci.txt
python3 -m pip install --quiet --disable-pip-version-check --no-deps -e ./sdk -e .
# The SDK's compiled core (take5._core) in place, beside the sources the editable install serves:
# tests/test_core.py then fails in CI if it is not the core in use.
(cd sdk && python3 setup.py --quiet build_ext --inplace)

if [ "$(id -u)" = 0 ]; then
    # Node.js and npm for the Node example bot (tests/test_node_bot.py): never skipped in CI.
    if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
    fi
    # systemd-analyze checks the units in deploy/ (tests/test_deploy.py); no systemd runs here.
    if ! command -v systemd-analyze >/dev/null; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq systemd >/dev/null
    fi
    bash scripts/setup-docker.sh
    bash scripts/setup-postgres.sh >/dev/null
    bash scripts/setup-go.sh
    [ -f scripts/setup-browser.sh ] && bash scripts/setup-browser.sh
else
    echo "test.sh: not root: skipping Docker and browser set-up" >&2
    # a cluster of the user's own needs no root when Debian's postgresql is installed
    bash scripts/setup-postgres.sh >/dev/null || echo "test.sh: no PostgreSQL: its tests skip" >&2
fi

[ "${1:-}" = --setup-only ] && exit 0
python3 -m pytest "$@"
