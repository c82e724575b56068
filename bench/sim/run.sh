#!/usr/bin/env bash
# Simulator benchmark: ring allreduce of 1 GiB on the dgx-h100 preset (rail-optimised fat-tree):
# 8 H100 per server, 8 x 400G NDR NICs: 1,024 GPUs (128 servers) and
# 16,384 GPUs (2,048 servers), with phase reuse and event by event.
# Usage: bench/sim/run.sh BUILD_DIR   (a release build)
set -eu
b=${1:-build/release}
bin=$b/bench/sim/bench_sim
export STRATA_DATA_DIR=${STRATA_DATA_DIR:-$(cd "$(dirname "$0")/../.." && pwd)/data}
c1k=dgx-h100:128
c16k=dgx-h100:2048
for r in spread ecmp; do
  "$bin" $c1k reuse $r
  "$bin" $c1k full $r
  "$bin" $c16k reuse $r
  "$bin" $c16k full:256 $r
done
