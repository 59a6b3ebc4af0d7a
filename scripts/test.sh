#!/usr/bin/env bash
# Set up everything the tests need on a fresh machine (Python packages, a Docker engine and base image,
# Chromium for the site tests, Node.js packages for the Node bot), then run the whole test suite.
# Usage: scripts/test.sh [pytest args...]
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m pip install --quiet --disable-pip-version-check -e ".[test,dask]"

if [ -x scripts/setup-docker.sh ]; then
    scripts/setup-docker.sh
fi
if [ -x scripts/setup-browser.sh ]; then
    scripts/setup-browser.sh
fi

python3 -m pytest "$@"
