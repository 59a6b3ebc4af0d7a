#!/usr/bin/env bash
# The type checker, as CI runs it: mypy with the settings in pyproject.toml ([tool.mypy]: strict
# on the take5 SDK and on take5_arena, generated gRPC code exempt), then with the same settings on
# the benchmark scripts (bench/*.py) and on each bench bot (bench/bots/*/bot.py) in a run of its
# own: every bot folder's module is `bot`, which one run cannot hold twice.
#   scripts/typecheck.sh                    # as CI
#   scripts/typecheck.sh --no-incremental   # ... the same runs, each with these options
#   scripts/typecheck.sh take5_arena/cli    # ... or only some files or folders: one run of those
# Other arguments go to mypy; if any is not an option (a path, or an option's value such as the
# package of `-p take5`), mypy runs once with just those. Needs the test extra (pip install -e
# ".[test]").
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD:$PWD/sdk${PYTHONPATH:+:$PYTHONPATH}"
for arg in "$@"; do
    case "$arg" in
        -*) ;;
        *) exec python3 -m mypy "$@" ;;  # a path (or an option's value): just what was asked
    esac
done
status=0
python3 -m mypy "$@" || status=1
python3 -m mypy "$@" bench/*.py || status=1
for bot in bench/bots/*/bot.py; do
    # A bot imports neither take5.env nor the arena's gRPC code that pyproject's overrides name.
    python3 -m mypy --no-warn-unused-configs "$@" "$bot" || status=1
done
exit "$status"
