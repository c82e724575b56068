#!/usr/bin/env bash
# Wall benchmark: GPT-3 175B on DGX H100 from 64 to 65,536 GPUs, four
# strategies, weak scaling (target: whole sweep < 10 s).
set -eu
build=${1:-build/release}
here=$(dirname "$0")
export STRATA_DATA_DIR="$here/../../data"
uptime
"$build/bench/wall/bench_wall" gpt3-175b dgx-h100 64 65536 3
