#!/usr/bin/env bash
# The linters, as CI runs them: ruff's formatter (check only) and ruff's checks, with the settings
# in pyproject.toml ([tool.ruff]). `scripts/lint.sh --fix` formats and applies the safe fixes.
# Needs the test extra (pip install -e ".[test]").
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--fix" ]; then
    python3 -m ruff format .
    python3 -m ruff check --fix .
    exit 0
fi
python3 -m ruff format --check .
python3 -m ruff check .
