#!/usr/bin/env bash
# Simulator at scale (issue 14): end-to-end `strata sim` / `strata report` runs for every
# algorithm, all-to-all and concurrent groups, one line each: wall and user CPU seconds, peak
# RSS, the load average when it started and the simulated time. Each run is bounded by
# TIMEOUT seconds (default 300); rc=124 means it did not finish.
# Usage: bench/sim/scale.sh [STRATA_BINARY] [quick]   (quick: only the rows under a minute)
set -u
S=${1:-build/release/tools/strata/strata}
quick=${2:-}
to=${TIMEOUT:-300}
export STRATA_DATA_DIR=${STRATA_DATA_DIR:-$(cd "$(dirname "$0")/../.." && pwd)/data} STRATA_PROGRESS=0
out=$(mktemp) tm=$(mktemp)
trap 'rm -f "$out" "$tm"' EXIT
row() { # LABEL ARGS...
  local label=$1; shift
  local l; l=$(cut -d' ' -f1-3 /proc/loadavg)
  /usr/bin/time -f "%e s wall %U s user %M KiB" -o "$tm" timeout "$to" "$S" "$@" >"$out" 2>&1
  local rc=$?
  echo "$label | rc=$rc | $(tail -1 "$tm") | load $l | $(grep -m1 -E '^  (time|phases) ' "$out" | sed 's/  */ /g')"
}
row "ring 16k" sim dgx-h100:2048
row "tree 1k" sim dgx-h100:128 --algo tree
row "hier 1k" sim dgx-h100:128 --algo hier
row "nvlstree 1k" sim dgx-h100:128 --algo nvlstree
row "alltoall pairwise 128" sim dgx-h100:16 --op alltoall --algo pairwise
row "alltoall pairwise 512" sim dgx-h100:64 --op alltoall --algo pairwise
row "alltoall bruck 2048" sim dgx-h100:256 --op alltoall --algo bruck
row "TP+DP 1024" sim dgx-h100:128 --size 256M --group 8 --also allreduce:1G:stride=8
row "report 16k" report dgx-h100:2048
[ "$quick" = quick ] && exit 0
row "ring 100k" sim dgx-h100:12500,radix=128
for a in recdbl rabenseifner innet nvlstree tree hier; do
  row "$a 16k" sim dgx-h100:2048 --algo $a
done
row "alltoall pairwise 1024" sim dgx-h100:128 --op alltoall --algo pairwise
row "alltoall bruck 4096" sim dgx-h100:512 --op alltoall --algo bruck
row "alltoall pairwise 4096" sim dgx-h100:512 --op alltoall --algo pairwise
row "alltoall pairwise 16k" sim dgx-h100:2048 --op alltoall --algo pairwise
row "alltoall bruck 16k" sim dgx-h100:2048 --op alltoall --algo bruck
row "TP+DP 4096" sim dgx-h100:512 --size 256M --group 8 --also allreduce:1G:stride=8
row "TP+DP 16k" sim dgx-h100:2048 --size 256M --group 8 --also allreduce:1G:stride=8
row "report 100k" report dgx-h100:12500,radix=128
