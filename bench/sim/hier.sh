#!/bin/bash
# Hier (and torus2d, ring: no regression) allreduce, 1 GiB, on dgx-h100:512
# and 2048 (4,096 / 16,384 GPUs), two binaries in turn, REPS rounds, each run
# under the machine-wide lock at real-time priority (bench/README.md
# "Issue 14, session 10 (hier)").
# Usage: bash bench/sim/hier.sh BASE_STRATA NEW_STRATA [REPS] [ALGOS] [SERVERS]
set -u
[ $# -ge 2 ] || { echo "usage: $0 BASE_STRATA NEW_STRATA [REPS] [ALGOS] [SERVERS]" >&2; exit 2; }
reps=${3:-3}
for r in $(seq "$reps"); do for n in ${5:-512 2048}; do for a in ${4:-hier}; do
  for S in "$1" "$2"; do
    echo "== $S $a dgx-h100:$n round $r $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
    flock /tmp/strata-rt.lock chrt -f 50 /usr/bin/time -f '%e s wall %U s user %M KiB' \
      timeout 115 "$S" sim "dgx-h100:$n" --algo "$a" --size 1GiB 2>&1 |
      grep -E "^  time|^  phases|wall"
  done
done; done; done
