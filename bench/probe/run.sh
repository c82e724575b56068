#!/usr/bin/env bash
# Calibrate, then predict against measured, side by side (bench/README.md,
# "probe"): strata probe --save, then strata bench allreduce at 2 and 4
# ranks with --model, 8 B to 64 MiB, and the load before and after; at 4
# ranks (more than the cores) also the error in every wait regime.
# usage: bash bench/probe/run.sh [BUILD_DIR] [--quick]
# RANKS="2" runs only 2 ranks (e.g. under chrt -f, where 4 ranks on 2
# cores would not share the cores as they do normally; common.md).
#
# The host's state: this VM's cache-line hand-off between its two cpus has
# been seen at ~50 ns in some minutes and 225-490 ns in others (bench/
# README.md, "Issue 19, session 8"), and a calibration holds only in the
# state it was probed in. So each rank count's bench is bracketed by the
# coherence latency (`strata probe --quick`'s all-pairs median) taken just
# before the calibrating probe and just after the bench, beside the
# calibration's own figure; when the largest of the three is more than
# STATE_RATIO (default 3) times the smallest, the state changed under the
# run: the line "# STATE CHANGED" says so and the run is redone, at most
# STATE_TRIES times in all (default 3). Every try is printed, the flipped
# ones too; none is hidden.
set -eu
build=${1:-build/release}
quick=${2:-}
S=$build/tools/strata/strata
ratio=${STATE_RATIO:-3}
tries=${STATE_TRIES:-3}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# The coherence latency now (ns): strata probe --quick, all pairs' median.
c2c_ns() {
  "$S" probe --quick --json -o "$out/q.json" >/dev/null &&
    awk 'BEGIN{RS=","} /"all_pairs_s"/{f=1} f && /"median"/{sub(/.*: */,""); printf "%.0f", $0*1e9; exit}' "$out/q.json"
}

for n in ${RANKS:-2 4}; do
  for try in $(seq 1 "$tries"); do
    echo "# $(date -u +%FT%TZ) $(uptime)"
    before=$(c2c_ns)
    "$S" probe $quick --save "$out/local.json" |
      grep -E "all pairs|placement|PLACEMENT|alpha|one way|barrier, [0-9]|own work|clock read|dependent add|per rank|switch|futex|^  +[0-9]+ [KM]iB|bottleneck|flags alone|hand-offs|hidden by"
    calib=$(awk 'BEGIN{RS=","} /"line_latency_s"/{sub(/.*: */,""); printf "%.0f", $0*1e9; exit}' "$out/local.json")
    echo "# $(uptime)"
    "$S" bench allreduce -P "$n" -b 8 -e 64M -f 2 -w 5 -n 40 -c 0 --model "$out/local.json" \
      >"$out/bench.txt"
    after=$(c2c_ns)
    awk '/^#  *size|^#  *\(B\)/ || !/^#/ {print}' "$out/bench.txt" | cut -c1-22,101-
    grep "^# this run" "$out/bench.txt" || true # the bench's own barrier and vCPU rate (none before s16-h19a)
    grep "Model error" "$out/bench.txt"
    changed=$(awk -v a="$before" -v b="$calib" -v c="$after" -v r="$ratio" 'BEGIN {
      lo = a; hi = a; if (b < lo) lo = b; if (b > hi) hi = b; if (c < lo) lo = c; if (c > hi) hi = c;
      print (lo > 0 && hi > r * lo) ? 1 : 0 }')
    state="coherence latency ${before} ns before the probe, ${calib} ns in it, ${after} ns after the bench"
    if [ "$changed" = 1 ]; then
      echo "# STATE CHANGED ($n ranks, try $try of $tries): $state"
    else
      echo "# state held ($n ranks, try $try of $tries): $state"
      break
    fi
  done
done
echo "# $(uptime)"
