#!/usr/bin/env bash
# Plan benchmarks: the full search for GPT-3 175B on 3,072 A100s (target
# < 2 s), then the validation table (bench/plan/validate.sh).
set -eu
build=${1:-build/release}
here=$(dirname "$0")
export STRATA_DATA_DIR="$here/../../data"
uptime
"$build/bench/plan/bench_plan" gpt3-175b dgx-a100:384 1536 5
bash "$here/validate.sh" "$build/tools/strata/strata"
