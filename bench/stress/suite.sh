#!/usr/bin/env bash
# The whole test suite under CPU load: RUNS times (default 5) `ctest -j 2`
# over BUILD_DIR while `stress-ng --cpu HOGS` (default 2) keeps HOGS CPUs
# busy. Every run must pass; a failure's output is kept.
#
#   bench/stress/suite.sh [BUILD_DIR] [RUNS] [HOGS] [CTEST_ARGS...]
#
# Needs stress-ng (scripts/install-deps.sh --bench). Not run by bench/run.sh
# (it takes RUNS suite lengths); results and load go to BUILD_DIR/stress/ and
# are recorded in bench/README.md. Exit 0 when every run passed, 1 otherwise.
set -uo pipefail
build=${1:-build/release}
runs=${2:-5}
hogs=${3:-2}
shift $(( $# < 3 ? $# : 3 ))
command -v stress-ng >/dev/null ||
    { echo "stress: stress-ng is not installed (scripts/install-deps.sh --bench)" >&2; exit 2; }
[ -f "$build/CTestTestfile.cmake" ] || { echo "stress: $build is not a built tree (make build)" >&2; exit 2; }
out=$build/stress
mkdir -p "$out"

stress-ng --cpu "$hogs" --timeout 0 --quiet &
hog=$!
trap 'kill $hog 2>/dev/null; wait $hog 2>/dev/null' EXIT
sleep 1

failed=0
for i in $(seq 1 "$runs"); do
    t0=$(date +%s)
    load0=$(cut -d' ' -f1 /proc/loadavg)
    ctest --test-dir "$build" -j 2 --timeout 900 --output-on-failure "$@" >"$out/run$i.log" 2>&1
    rc=$?
    summary=$(grep -E "tests passed" "$out/run$i.log" | tail -1)
    echo "stress: run $i/$runs: ${summary:-no summary} in $(( $(date +%s) - t0 )) s (load $load0 -> $(cut -d' ' -f1 /proc/loadavg), $hogs CPU hogs)"
    if [ $rc -ne 0 ]; then
        failed=$((failed + 1))
        grep -E "^\s+[0-9]+ - " "$out/run$i.log" | sed 's/^/stress:   failed: /'
    fi
done
echo "stress: $runs runs, $failed with a failure (logs in $out/)"
[ $failed -eq 0 ]
