#!/usr/bin/env bash
# Simulator benchmark: ring allreduce of 1 GiB on rail-optimised fat-trees of
# DGX H100-like servers (8 GPUs, 8 NICs each): 1,024 GPUs (128 servers) and
# 16,384 GPUs (2,048 servers), with phase reuse and event by event.
# Usage: bench/sim/run.sh BUILD_DIR   (a release build)
set -eu
b=${1:-build/release}
bin=$b/bench/sim/bench_sim
export STRATA_DATA_DIR=${STRATA_DATA_DIR:-$(cd "$(dirname "$0")/../.." && pwd)/data}
c1k=railft:servers=128,gpus=8
c16k=railft:servers=2048,gpus=8
for r in spread ecmp; do
  "$bin" $c1k reuse $r
  "$bin" $c1k full $r
  "$bin" $c16k reuse $r
  "$bin" $c16k full:256 $r
done
