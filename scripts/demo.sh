#!/usr/bin/env bash
# Set up the project on a fresh machine and run its main job.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check -e .
referee play --players 4 --seed 7 --record out/demo-game.json
referee verify out/demo-game.json
