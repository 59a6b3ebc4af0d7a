#!/usr/bin/env bash
# Run the test suite with CPU hogs beside it, as on a busy shared host: a test that passes only on
# an idle machine is a test that lies about the platform.
#
#   scripts/test-under-load.sh                 # scripts/test.sh with two hogs per core
#   HOGS=8 scripts/test-under-load.sh -k docker   # eight hogs; extra arguments go to scripts/test.sh
#   TEST_CMD="python3 -m pytest" scripts/test-under-load.sh tests/test_match.py   # skip the set-up
#
# The hogs are busy loops at normal priority (nice 0), so they compete with the suite as other
# users' work would. They are stopped when the suite ends, however it ends (Ctrl-C included).
# The exit code is the suite's.
set -euo pipefail
cd "$(dirname "$0")/.."

cores=$(nproc 2>/dev/null || echo 2)
HOGS="${HOGS:-$((2 * cores))}"
TEST_CMD="${TEST_CMD:-scripts/test.sh}"

hogs=()
stop_hogs() {
    [ "${#hogs[@]}" -gt 0 ] && kill "${hogs[@]}" 2>/dev/null || true
    wait 2>/dev/null || true
}
trap stop_hogs EXIT
trap 'exit 130' INT TERM

for _ in $(seq "$HOGS"); do
    # sh's own loop: no interpreter to import, so the load starts at once and costs no memory.
    sh -c 'while :; do :; done' &
    hogs+=("$!")
done
echo "test-under-load: $HOGS CPU hogs on $cores cores; running: $TEST_CMD $*" >&2
start=$(date +%s)
set +e
$TEST_CMD "$@"
code=$?
set -e
echo "test-under-load: exit $code after $(( $(date +%s) - start )) s (load average: $(cut -d' ' -f1-3 /proc/loadavg))" >&2
exit "$code"
