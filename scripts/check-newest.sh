#!/usr/bin/env bash
# Tomorrow's breakage, today: install the NEWEST versions that pyproject.toml's ranges allow (not
# the lock) into a virtual environment of its own, then run the type check, the linters and the
# tests that need no Docker engine, browser or long run. A user's `pip install` gets these versions;
# CI gets the lock (requirements/, scripts/lock.sh). Run it before refreshing the lock, and once a
# week or so (docs/maintainers/testing.md): when it fails, fix the code or narrow a range, then
# refresh the lock.
#   scripts/check-newest.sh                 # venv in build/newest (made anew), then the checks
#   scripts/check-newest.sh -k rules        # ... with these pytest arguments instead of the default
# Prints the versions that differ from the lock, then one line a check; exit 1 if any failed.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
venv=build/newest
rm -rf "$venv"
"$PYTHON" -m venv "$venv"
py="$PWD/$venv/bin/python"
mkdir -p build
# --upgrade-strategy eager: every dependency at its newest allowed version, not just the direct ones.
if ! { "$py" -m pip install --disable-pip-version-check --upgrade pip \
        && "$py" -m pip install --disable-pip-version-check --upgrade --upgrade-strategy eager \
            -e ./sdk -e ".[test,dask,rl]"; } >build/newest-install.log 2>&1; then
    tail -n 20 build/newest-install.log >&2
    echo "check-newest: the newest versions could not be installed (build/newest-install.log)" >&2
    exit 1
fi

echo "check-newest: versions that differ from requirements/ci.txt:"
"$py" - <<'PY'
import re
from importlib import metadata
from packaging.utils import canonicalize_name
locked = {}
for line in open("requirements/ci.txt"):
    m = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)", line)
    if m:
        locked.setdefault(canonicalize_name(m[1]), set()).add(m[2])
for dist in sorted(metadata.distributions(), key=lambda d: canonicalize_name(d.metadata["Name"])):
    name = canonicalize_name(dist.metadata["Name"])
    if name in locked and dist.version not in locked[name]:
        print(f"  {name} {'/'.join(sorted(locked[name]))} -> {dist.version}")
PY

status=0
run() {  # run NAME COMMAND...: one line of result per check
    local name=$1; shift
    if "$@" >"build/newest-$name.log" 2>&1; then
        echo "check-newest: $name passed"
    else
        echo "check-newest: $name FAILED (build/newest-$name.log):"
        tail -n 15 "build/newest-$name.log" | sed 's/^/  /'
        status=1
    fi
}
export PATH="$PWD/$venv/bin:$PATH"
run typecheck scripts/typecheck.sh
run lint scripts/lint.sh
if [ "$#" -gt 0 ]; then
    run tests "$py" -m pytest -q -p no:cacheprovider "$@"
else
    run tests "$py" -m pytest -q -p no:cacheprovider -m "not docker and not browser and not slow" tests
fi
exit "$status"
