#!/usr/bin/env bash
# Build the libFuzzer targets (preset `fuzz`: clang, ASan+UBSan) and run each
# for a bounded time on its seed corpus fuzz/corpus/<name>/.
#
#   fuzz/run.sh [SECONDS] [NAME...]     default 60 s each, every fz_<name>.c
#
# New inputs libFuzzer finds go to build/fuzz/work/<name>/corpus (not the
# tree). A crash, leak, sanitizer report, timeout (> 10 s on one input) or
# out-of-memory (> 2 GiB) fails the run; its input is left in
# build/fuzz/work/<name>/ as crash-*, leak-*, timeout-* or oom-*: copy it to
# fuzz/corpus/<name>/ so fuzz_replay_<name> keeps it as a regression test, and
# fix the parser. Exit status: 0 when every target ran clean, 1 otherwise.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
secs=${1:-60}
shift || true
cd "$root"
cmake --preset fuzz >/dev/null
cmake --build build/fuzz --target fuzz -j "${JOBS:-$(nproc)}" >/dev/null

names=("$@")
if [ ${#names[@]} -eq 0 ]; then
    for f in fuzz/fz_*.c; do n=${f#fuzz/fz_}; names+=("${n%.c}"); done
fi
export STRATA_DATA_DIR=$root/data STRATA_LOG=error
failed=()
for n in "${names[@]}"; do
    bin=build/fuzz/fuzz/fz_$n
    work=build/fuzz/work/$n
    mkdir -p "$work/corpus"
    seeds=fuzz/corpus/$n
    [ -d "$seeds" ] || { echo "fuzz: $n has no seed corpus ($seeds)" >&2; failed+=("$n"); continue; }
    echo "== fuzz $n: ${secs} s"
    # -timeout: one input over 10 s is a hang; -rss_limit_mb: 2 GiB is an
    # unbounded allocation for any of these parsers.
    if "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$work/" "$work/corpus" "$seeds" >"$work/log" 2>&1; then
        grep -E "^stat::number_of_executed_units|^Done" "$work/log" | tail -2
    else
        tail -40 "$work/log"
        echo "fuzz: $n FAILED; input(s): $(ls "$work" | grep -E '^(crash|leak|timeout|oom|slow-unit)-' | sed "s|^|$work/|" | tr '\n' ' ')" >&2
        failed+=("$n")
    fi
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz: failed: ${failed[*]}" >&2
    exit 1
fi
echo "fuzz: ${#names[@]} targets, ${secs} s each, no failure"
