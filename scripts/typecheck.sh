#!/usr/bin/env bash
# The type checker, as CI runs it: mypy with the settings in pyproject.toml ([tool.mypy]: strict
# on the take5 SDK and on take5_arena, generated gRPC code exempt).
#   scripts/typecheck.sh                 # as CI
#   scripts/typecheck.sh take5_arena/cli # ... or only some files or folders
# Other arguments go to mypy. Needs the test extra (pip install -e ".[test]").
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD:$PWD/sdk${PYTHONPATH:+:$PYTHONPATH}"
python3 -m mypy "$@"
