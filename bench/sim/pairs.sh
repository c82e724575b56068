#!/usr/bin/env bash
# Paired base/new runs of the issue-14 rows at 16,384 GPUs, alternated (base then new, row by
# row, ROUNDS rounds), each under the helpers' lock with chrt: one line per run,
# "ROUND ROW SIDE wall user maxrss_KiB load LOAD HH:MM:SS". Reports land in $OUT/ROW-SIDE.txt.
# Usage: bench/sim/pairs.sh BASE_STRATA NEW_STRATA [ROUNDS]
set -u
base=$1 new=$2 rounds=${3:-5}
out=${OUT:-$(mktemp -d)}
export STRATA_PROGRESS=0
rows=("tree|sim dgx-h100:2048 --algo tree --size 1GiB"
  "nvlstree|sim dgx-h100:2048 --algo nvlstree --size 1GiB"
  "hier|sim dgx-h100:2048 --algo hier --size 1GiB"
  "tpdp|sim dgx-h100:2048 --size 256M --group 8 --also allreduce:1G:stride=8")
for ((i = 1; i <= rounds; i++)); do
  for r in "${rows[@]}"; do
    name=${r%%|*} args=${r#*|}
    for side in base new; do
      [ "$side" = base ] && b=$base || b=$new
      l=$(cut -d' ' -f1 /proc/loadavg)
      # shellcheck disable=SC2086 # args are words
      flock /tmp/strata-rt.lock chrt -f 50 /usr/bin/time -f "%e %U %M" -o "$out/time" \
        "$b" $args >"$out/$name-$side.txt" 2>&1
      echo "$i $name $side $(cat "$out/time") load $l $(date +%H:%M:%S)"
    done
  done
done
