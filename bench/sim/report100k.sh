#!/bin/bash
# `strata report dgx-h100:12500,radix=128` (100,000 GPUs), two binaries in
# turn, REPS rounds, each run under the machine-wide lock at real-time
# priority (bench/README.md, "s11-h14").
# Usage: bash bench/sim/report100k.sh BASE_STRATA NEW_STRATA [REPS]
set -u
[ $# -ge 2 ] || { echo "usage: $0 BASE_STRATA NEW_STRATA [REPS]" >&2; exit 2; }
for r in $(seq "${3:-2}"); do for S in "$1" "$2"; do
  echo "== $S report round $r $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
  flock /tmp/strata-rt.lock chrt -f 50 /usr/bin/time -f '%e s wall %U s user %M KiB' \
    timeout 115 "$S" report dgx-h100:12500,radix=128 2>&1 >/dev/null | tail -1
done; done
