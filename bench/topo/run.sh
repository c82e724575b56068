#!/usr/bin/env bash
# Topology benchmark: 16,384-GPU rail-optimised fat-tree, build + metrics,
# then 1M hash-picked ECMP routes — once from the builder spec, once from
# the dgx-h100 preset (hand-wired servers, grafted fabric: closed-form
# bisection and hops by symmetry must come along). $1 = build dir
# (default build/release).
set -eu
build=${1:-build/release}
here=$(cd "$(dirname "$0")" && pwd)
export STRATA_DATA_DIR=${STRATA_DATA_DIR:-$here/../../data}
"$build/bench/topo/bench_topo" railft:servers=2048,gpus=8 1000000
"$build/bench/topo/bench_topo" dgx-h100:2048 1000000
