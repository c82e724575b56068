#!/bin/bash
# Issue 11, cause 8 (in part): the collective model (src/sched/cost.c) and
# the simulator (src/sim) price the same schedule, so on every preset and
# every algorithm that applies, at 1 GiB with spread routing (no hash
# collisions), the simulated time must be within 2 % of the model's.
# OPEN lists the pairs that disagree today, with the disagreement measured
# when this test was written (sim vs model); their contention is not yet
# named, so they are skipped here and printed, not hidden. A pair not in
# OPEN that drifts past 2 % fails; a pair in OPEN that comes within 2 %
# is reported so it can leave the list.
. "$(dirname "$0")/../cli_lib.sh" "$1"

declare -A OPEN=(
  [ascend-910b/tree]="-49.7 %"     [dgx-1v/tree]="-62.0 %"        [dgx-1v/binomial]="-8.3 %"
  [mi300x/tree]="-49.6 %"          [gb200-nvl72/rabenseifner]="+16.1 %"
  [dgx-a100:2/torus2d]="+107.3 %"  [dgx-h100:2/torus2d]="+60.0 %"  [hgx-h200:2/torus2d]="+64.6 %"
  [gb200-nvl72:2/ring]="-5.2 %"    [gb200-nvl72:2/binomial]="+125.5 %"
  [gb200-nvl72:2/recdbl]="+599.2 %" [gb200-nvl72:2/rabenseifner]="+721.0 %"
  [gb200-nvl72:2/torus2d]="+64.6 %" [gb200-nvl72:2/innet]="+406.0 %"
  [pcie-8gpu/tree]="+49.6 %"       [pcie-8gpu/binomial]="+33.3 %"  [pcie-8gpu/recdbl]="+66.7 %"
  [pcie-8gpu/rabenseifner]="+85.7 %" [pcie-8gpu/torus2d]="+14.3 %"
  [tpu-v4/tree]="-12.7 %"          [tpu-v4/binomial]="+16.7 %"     [tpu-v4/recdbl]="+33.3 %"
  [tpu-v4/rabenseifner]="+50.0 %"  [tpu-v4/torus2d]="+5.9 %"
  [tpu-v5e/tree]="+49.8 %"         [tpu-v5e/binomial]="-19.4 %"    [tpu-v5e/recdbl]="+22.2 %"
  [tpu-v5e/rabenseifner]="+43.2 %"
)

agree=0
for p in ascend-910b dgx-1v dgx-2 dgx-a100 dgx-a100:2 dgx-h100 dgx-h100:2 gb200-nvl72 \
         gb200-nvl72:2 hgx-h200 hgx-h200:2 mi300x pcie-8gpu tpu-v4 tpu-v5e; do
  for a in ring tree binomial recdbl rabenseifner hier torus2d innet nvlstree; do
    # The per-run limit is generous: the largest runs take ~1 min on 2 idle
    # cores and passed 120 s under `stress-ng --cpu 2` (bench/stress), where
    # a killed run was once counted as "does not apply" and the test failed
    # on the count. A run killed by the limit now fails by name.
    rc=0
    timeout "${SIM_LIMIT:-600}" "$S" sim "$p" --algo "$a" --routing spread --size 1G --json \
      >"$tmp/j" 2>/dev/null || rc=$?
    if [ $rc = 124 ]; then
      echo "FAIL: $p/$a: strata sim did not finish within ${SIM_LIMIT:-600} s"; fail=1; continue
    fi
    [ $rc = 0 ] || continue # the algorithm does not apply here
    t=$(grep -oE '"time_s": [0-9.e+-]+' "$tmp/j" | cut -d' ' -f2)
    m=$(grep -oE '"time_model_s": [0-9.e+-]+' "$tmp/j" | cut -d' ' -f2)
    [ -n "$m" ] || continue # no model figure (the schedule's own: hier on one server)
    off=$(awk -v t="$t" -v m="$m" 'BEGIN { d = t / m - 1; printf "%+.1f", 100 * d }')
    within=$(awk -v t="$t" -v m="$m" 'BEGIN { d = t / m - 1; print (d < 0 ? -d : d) <= 0.02 }')
    key="$p/$a"
    if [ -n "${OPEN[$key]}" ]; then
      if [ "$within" = 1 ]; then echo "note: $key now agrees ($off %): remove it from OPEN"
      else echo "open: $key sim vs model $off % (listed ${OPEN[$key]}), contention not yet named"; fi
    elif [ "$within" = 1 ]; then
      agree=$((agree + 1))
    else
      echo "FAIL: $key: simulated $t s vs model $m s ($off %), beyond 2 %"; fail=1
    fi
  done
done
# 15 clusters: the pairs that apply and have a model figure, less OPEN
[ "$agree" -ge 75 ] || { echo "FAIL: only $agree pairs agree (75 did when this was written)"; fail=1; }
echo "$agree pairs agree within 2 %"
exit $fail
