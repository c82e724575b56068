#!/bin/bash
# Tree and nvlstree allreduce (1 GiB) on dgx-h100:128/512/2048 (1,024 / 4,096 /
# 16,384 GPUs), two binaries in turn, each run under the machine-wide lock at
# real-time priority (bench/README.md "Issue 14, sixth pass").
# Usage: bash bench/sim/trees.sh BASE_STRATA NEW_STRATA
set -u
[ $# -eq 2 ] || { echo "usage: $0 BASE_STRATA NEW_STRATA" >&2; exit 2; }
for n in 128 512 2048; do for a in tree nvlstree; do for S in "$1" "$2"; do
  echo "== $S $a dgx-h100:$n $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
  flock /tmp/strata-rt.lock chrt -f 50 /usr/bin/time -f '%e s wall %U s user %M KiB' \
    timeout 115 "$S" sim "dgx-h100:$n" --algo "$a" --size 1GiB 2>&1 |
    grep -E "^  time|^  phases|^  folded|^  rotated|wall"
done; done; done
