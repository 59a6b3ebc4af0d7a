#!/usr/bin/env bash
# Set up the project on a fresh machine and run its main job: a small tournament of the example bots
# (in Docker containers when an engine can be had, as local processes otherwise), its standings, and
# the published site with standings and game replays.
# Usage: scripts/demo.sh [--local]          TOURNAMENT=out/demo GAMES=16 to change where and how much
set -euo pipefail
cd "$(dirname "$0")/.."

T="${TOURNAMENT:-out/demo}"
GAMES="${GAMES:-16}"
# The versions CI tested (requirements/arena.txt, scripts/lock.sh), then the project itself.
python3 -m pip install --quiet --disable-pip-version-check --require-hashes -r requirements/arena.txt
python3 -m pip install --quiet --disable-pip-version-check --no-deps -e .

sandbox=local
if [ "${1:-}" != "--local" ] && [ "$(id -u)" = 0 ]; then
    if bash scripts/setup-docker.sh; then
        sandbox=docker
    else
        echo "demo: no Docker engine could be started: the bots run as local processes" >&2
    fi
fi

rm -rf "$T"
for bot in random lowest heuristic montecarlo; do
    referee submit "example_bots/$bot" --name "$bot" --tournament "$T" --sandbox "$sandbox"
done
referee tournament run --tournament "$T" --players 4 --games "$GAMES" --sandbox "$sandbox"
referee verify --quiet --tournament "$T" && echo "every recorded game verified against the rules"
referee publish --tournament "$T" --out "$T/site"
