#!/usr/bin/env bash
# Topology I/O benchmark: preset load + build at 8 and 16,384 GPUs, NCCL XML
# import + build, cluster-file export, and `local` (hwloc discovery).
set -eu
build=${1:-build/release}
STRATA_DATA_DIR="$(cd "$(dirname "$0")/../.." && pwd)/data" "$build/bench/topoio/bench_topoio" 21
