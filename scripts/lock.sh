#!/usr/bin/env bash
# Refresh the lock files in requirements/ from the ranges in pyproject.toml and sdk/pyproject.toml,
# with uv's resolver (`uv pip compile`), every file pinned with its hashes:
#   requirements/ci.txt          everything the tests, CI and a maintainer's checkout install: the
#                                platform with all its extras (docker, web, metrics, dask, rl, test),
#                                for every Python the project supports (3.10 and newer; a version
#                                can differ by Python, behind a marker), but the SDK itself (sdk/,
#                                installed from the checkout: scripts/test.sh)
#   requirements/arena.txt       what a server or a worker of the arena runs (docs/operations.md):
#                                the platform with its extras docker, web, metrics, dask and
#                                postgres, without the test tools, for every Python from 3.10, but the SDK itself
#   requirements/bot-python.txt  the wheels of the Python bot image (scripts/setup-docker.sh):
#                                the SDK's extras bot and sim, for the image's Python (3.11, Linux
#                                x86_64)
# Usage: scripts/lock.sh            newest versions the ranges allow, then review the diff and run
#                                   scripts/test.sh before committing it
#        scripts/lock.sh --check    exit 1 when a lock file is not what the ranges resolve to today
#                                   (compares the pins, not the hashes)
# `pip install -e .` for a user keeps the ranges: a library must not pin its users; the lock is
# what CI tested. tests/test_lock.py fails when a pin falls outside its range.
set -euo pipefail
cd "$(dirname "$0")/.."

UV_VERSION=0.13.9  # the resolver's version: a newer uv may write the same pins differently
PYTHON="${PYTHON:-python3}"
if ! command -v uv >/dev/null || [ "$(uv --version | cut -d' ' -f2)" != "$UV_VERSION" ]; then
    "$PYTHON" -m pip install --quiet --disable-pip-version-check "uv==$UV_VERSION"
fi

check=0
[ "${1:-}" = "--check" ] && check=1
out=requirements
[ "$check" = 0 ] || out=$(mktemp -d)
common=(--generate-hashes --no-header)
header() {
    printf '# %s\n' "Made by scripts/lock.sh from $1 ($2): do not edit by hand." \
        "Install with: pip install --require-hashes -r $3"
}
{
    header "pyproject.toml's dependencies and all its extras" \
        "every Python from 3.10, universal" requirements/ci.txt
    uv pip compile pyproject.toml --all-extras --universal \
        --python-version 3.10 --no-emit-package take5 "${common[@]}"
} >"$out/ci.txt.new"
mv "$out/ci.txt.new" "$out/ci.txt"
{
    header "pyproject.toml's dependencies and its extras docker, web, metrics, dask and postgres" \
        "every Python from 3.10, universal" requirements/arena.txt
    uv pip compile pyproject.toml --extra docker --extra web --extra metrics --extra dask \
        --extra postgres --universal --python-version 3.10 --no-emit-package take5 "${common[@]}"
} >"$out/arena.txt.new"
mv "$out/arena.txt.new" "$out/arena.txt"
{
    header "sdk/pyproject.toml's extras bot and sim" "Python 3.11 on Linux x86_64, the bot image's" \
        requirements/bot-python.txt
    uv pip compile sdk/pyproject.toml --extra bot --extra sim --python-version 3.11 \
        --python-platform x86_64-manylinux_2_28 "${common[@]}"
} >"$out/bot-python.txt.new"
mv "$out/bot-python.txt.new" "$out/bot-python.txt"

if [ "$check" = 1 ]; then
    status=0
    for f in ci.txt arena.txt bot-python.txt; do
        if ! diff <(grep -E '^[A-Za-z]' "requirements/$f") <(grep -E '^[A-Za-z]' "$out/$f") >"$out/$f.diff"; then
            echo "lock: requirements/$f is not what the ranges resolve to today:" >&2
            cat "$out/$f.diff" >&2
            status=1
        fi
    done
    rm -rf "$out"
    [ "$status" = 0 ] && echo "lock: requirements/ is current"
    exit "$status"
fi
echo "lock: wrote requirements/ci.txt, arena.txt and bot-python.txt"
