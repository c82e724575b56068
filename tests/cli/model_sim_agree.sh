#!/bin/bash
# Issue 11, cause 8 (in part): the collective model (src/sched/cost.c) and
# the simulator (src/sim) price the same schedule, so on every preset and
# every algorithm that applies, at 1 GiB with spread routing (no hash
# collisions), the simulated time must be within 2 % of the model's.
# OPEN lists the pairs that disagree today, with the disagreement measured
# when this test was written (sim vs model); their contention is not yet
# named, so they are skipped here and printed, not hidden. Left the list
# (issue 11, cause 8): the trees, binomial, recdbl, rabenseifner and torus2d
# on switchless servers and tori (mi300x, dgx-1v, ascend-910b, pcie-8gpu,
# tpu-v4, tpu-v5e) — the model now routes their whole patterns (a flow
# split over equal-cost paths gets min capacity/load, binomial steps load
# only their senders' links, the tree's edges are routed at once); torus2d
# on 2 servers (dgx-a100, dgx-h100, hgx-h200, gb200-nvl72): strata sim ran
# the square default grid (rows of 4) where the model prices rows = servers;
# it now passes the ranks per server as torus2d's row length; innet on two
# GB200 NVL72 racks: the simulator put every shard's SHARP root on the
# first spine, now on the shard's own equal-cost path (spread, as the model
# assumes). A pair not in
# OPEN that drifts past 2 % fails; a pair in OPEN that comes within 2 %
# is reported so it can leave the list.
. "$(dirname "$0")/../cli_lib.sh" "$1"

# Left the list (issue 11): gb200-nvl72 rabenseifner (+16.1 %): folding 72
# ranks onto 64 leaves core ranks 0..7 two blocks each, so the halving
# steps are unequal (94/72 n a pass, not 63/64 n) and the model now prices
# the heaviest half; gb200-nvl72:2 ring (-5.2 %): the model charged every
# step the NIC hop's latency where the scale-up blocks set the step.
declare -A OPEN=()
# NAMED: pairs whose disagreement has a cause the model cannot see, which
# strata sim prints as the model's caveat (strata_coll_model_caveat): the
# test requires that reason in the report. recdbl, rabenseifner, binomial
# on 2 GB200 NVL72 racks: 72 ranks per rack is not a power of two, so
# partners 2^k < 72 apart are priced inside a rack though r XOR 64 leaves
# it for r = 8..63 (those steps cross the network).
declare -A NAMED=(
  [gb200-nvl72:2/binomial]="+125.5 %" [gb200-nvl72:2/recdbl]="+599.2 %"
  [gb200-nvl72:2/rabenseifner]="+605.5 %"
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
    if [ -n "${NAMED[$key]}" ]; then
      if grep -q '"model_caveat": "partners 2^k apart' "$tmp/j"; then
        echo "named: $key sim vs model $off % (listed ${NAMED[$key]}): the report prints the model's caveat"
      else echo "FAIL: $key: $off % and no model caveat in the report"; fail=1; fi
    elif [ -n "${OPEN[$key]}" ]; then
      if [ "$within" = 1 ]; then echo "note: $key now agrees ($off %): remove it from OPEN"
      else echo "open: $key sim vs model $off % (listed ${OPEN[$key]}), contention not yet named"; fi
    elif [ "$within" = 1 ]; then
      agree=$((agree + 1))
    else
      echo "FAIL: $key: simulated $t s vs model $m s ($off %), beyond 2 %"; fail=1
    fi
  done
done
# A server with more NICs than ranks (a GH200 node: one GPU, four 200G
# ports on the Grace; docs/validation.md row 36): the ring's and the
# tree's channels rotate over the four NICs in both (ring.c, tree.c params
# rails; the simulator splits a rail send over them). The tree's model
# priced four NICs where its schedule ran one (+245 % until its channels
# took the rails too).
gh=${STRATA_SOURCE_DIR:-$(dirname "$0")/../..}/tests/data/validation/gh200-4x200g.json
for a in ring tree; do
  if ! "$S" sim "$gh" --algo "$a" --routing spread --size 1G --json >"$tmp/j" 2>"$tmp/e"; then
    echo "FAIL: gh200-4x200g/$a: strata sim failed: $(cat "$tmp/e")"; fail=1; continue
  fi
  t=$(grep -oE '"time_s": [0-9.e+-]+' "$tmp/j" | cut -d' ' -f2)
  m=$(grep -oE '"time_model_s": [0-9.e+-]+' "$tmp/j" | cut -d' ' -f2)
  off=$(awk -v t="$t" -v m="$m" 'BEGIN { printf "%+.1f", 100 * (t / m - 1) }')
  if awk -v t="$t" -v m="$m" 'BEGIN { d = t / m - 1; exit !((d < 0 ? -d : d) <= 0.02) }'; then
    echo "gh200-4x200g/$a: sim vs model $off %"
  else echo "FAIL: gh200-4x200g/$a: simulated $t s vs model $m s ($off %), beyond 2 %"; fail=1; fi
done
# 15 clusters: the pairs that apply and have a model figure, less OPEN
[ "$agree" -ge 100 ] || { echo "FAIL: only $agree pairs agree (100 did when this was written)"; fail=1; }
echo "$agree pairs agree within 2 %"
exit $fail
