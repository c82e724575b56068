#!/usr/bin/env bash
# The engine forced into each output store mode against the model's branch
# for that mode (bench/README.md, "s14-h19b"): strata probe --save, then
# strata bench allreduce at 2 ranks, 2-16 MiB, with the output streamed
# (STRATA_NT_THRESHOLD=1), stored plain (=2^40) and learned (unset), ROUNDS
# times in turn (default 2). bench --model follows STRATA_NT_THRESHOLD, so
# its model column is that branch; unset, the model's own choice (auto).
# usage: bash bench/probe/forced.sh [BUILD_DIR]
# KEEP=FILE keeps the calibration. FROM, TO: the sizes (default 2M, 16M).
# LOCK="flock /tmp/strata-rt.lock chrt -f 50" runs each step under it.
set -eu
build=${1:-build/release}
S=$build/tools/strata/strata
lock=${LOCK:-}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "# $(date -u +%FT%TZ) $(uptime)"
$lock "$S" probe --save "$out/local.json" | grep -E "all pairs|placement|PLACEMENT"
if [ -n "${KEEP:-}" ]; then cp "$out/local.json" "$KEEP"; fi
for round in $(seq 1 "${ROUNDS:-2}"); do
  for mode in stream plain learned; do
    case $mode in
      stream) env="STRATA_NT_THRESHOLD=1" ;;
      plain) env="STRATA_NT_THRESHOLD=1099511627776" ;;
      *) env="STRATA_NT_UNSET=1" ;;
    esac
    echo "# round $round, $mode, $(date -u +%T) $(uptime | sed 's/.*average: //')"
    env $env $lock "$S" bench allreduce -P 2 -b "${FROM:-2M}" -e "${TO:-16M}" -f 2 -w 5 -n 40 -c 0 \
      --model "$out/local.json" | awk '!/^#/ || /Model error/' | cut -c1-22,101-
  done
done
