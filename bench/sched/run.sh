#!/usr/bin/env bash
# Collective-layer benchmark: every algorithm x 30 sizes predicted on a
# 16,384-GPU cluster (target < 100 ms), plus schedule generation speed.
set -eu
build=${1:-build/release}
STRATA_DATA_DIR="$(dirname "$0")/../../data" "$build/bench/sched/bench_sched" 20
