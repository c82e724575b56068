#!/usr/bin/env bash
# Calibrate, then predict against measured, side by side (bench/README.md,
# "probe"): strata probe --save, then strata bench allreduce at 2 and 4
# ranks with --model, 8 B to 64 MiB, and the load before and after; at 4
# ranks (more than the cores) also the error in every wait regime.
# usage: bash bench/probe/run.sh [BUILD_DIR] [--quick]
# RANKS="2" runs only 2 ranks (e.g. under chrt -f, where 4 ranks on 2
# cores would not share the cores as they do normally; common.md).
set -eu
build=${1:-build/release}
quick=${2:-}
S=$build/tools/strata/strata
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "# $(date -u +%FT%TZ) $(uptime)"
"$S" probe $quick --save "$out/local.json" | grep -E "all pairs|alpha|one way|per rank|switch|futex|^  +[0-9]+ [KM]iB|bottleneck"
for n in ${RANKS:-2 4}; do
  echo "# $(uptime)"
  "$S" bench allreduce -P "$n" -b 8 -e 64M -f 2 -w 5 -n 40 -c 0 --model "$out/local.json" \
    >"$out/bench.txt"
  awk '/^#  *size|^#  *\(B\)/ || !/^#/ {print}' "$out/bench.txt" | cut -c1-22,101-
  grep "Model error" "$out/bench.txt"
done
echo "# $(uptime)"
