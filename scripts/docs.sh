#!/usr/bin/env bash
# The SDK's API reference, as CI builds it: Sphinx (docs/api/conf.py) over the SDK's docstrings,
# with every warning an error, so a docstring that does not render or a public name that lost its
# docs fails the build. Offline; needs the test extra (pip install -e ".[test]").
# Usage: scripts/docs.sh [OUT]      (default: build/docs; open OUT/index.html)
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-build/docs}"
export PYTHONPATH="$PWD:$PWD/sdk${PYTHONPATH:+:$PYTHONPATH}"
python3 -m sphinx -W --keep-going -q -b html -d "$out/.doctrees" docs/api "$out"
echo "API reference: file://$(cd "$out" && pwd)/index.html"
