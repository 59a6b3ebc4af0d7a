#!/usr/bin/env bash
# The type checker, as CI runs it: mypy with the settings in pyproject.toml ([tool.mypy]: strict on
# the take5 SDK, the ordinary checks on take5_arena).
# Needs the test extra (pip install -e ".[test]").
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD:$PWD/sdk${PYTHONPATH:+:$PYTHONPATH}"
python3 -m mypy "$@"
