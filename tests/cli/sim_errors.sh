#!/usr/bin/env bash
# strata sim: exit codes, one-line errors on stderr, and the trace file.
# Bad flags exit 2; a bad cluster or an unwritable trace exits 1.
set -u
# shellcheck source=../cli_lib.sh
. "$(dirname "$0")/../cli_lib.sh" "$1"

C=switch:4,bw=10
expect 0 "" sim $C --size 1M
expect 2 "missing CLUSTER" sim
expect 2 "unknown collective 'allsum'" sim $C --op allsum
expect 2 "unknown algorithm" sim $C --algo magic
expect 2 "--routing expects spread or ecmp" sim $C --routing random
expect 2 "--mode expects barrier or async" sim $C --mode later
expect 2 "--size expects a size" sim $C --size lots
expect 2 "--chunks expects an integer" sim $C --chunks 0
expect 2 "--trace needs a value" sim $C --trace
expect 2 "--qps expects an integer >= 1" sim $C --qps 0
expect 2 "unknown option '--fast'" sim $C --fast
expect 2 "unexpected argument 'extra'" sim $C extra
expect 1 "cluster" sim nosuchcluster:3
expect 2 "--group expects an integer" sim $C --group 0
expect 1 "group 3 does not divide the cluster's 4 ranks" sim $C --group 3
expect 1 "group= or stride=, not both" sim $C --group 2 --stride 2
expect 2 "--also expects OP:SIZE" sim $C --also allreduce
expect 2 "unknown collective 'allsum'" sim $C --also allsum:1M
expect 2 "--also 'ring:64MiB': unknown collective 'ring' .the form is OP:SIZE" sim $C --also ring:64MiB
expect 2 "unknown algorithm 'fast'" sim $C --also allreduce:1M:fast
expect 2 "--also 'allreduce:1M:foo=3': unknown algorithm 'foo=3' .after OP:SIZE come group=N" sim $C --also allreduce:1M:foo=3
expect 2 "--also stride= expects an integer" sim $C --also allreduce:1M:stride=x
expect 1 "cannot write trace file" sim $C --size 1M --trace "$tmp/no/such/dir/t.json"

# A trace: trace-event JSON with an X event for every step of every rank:
# ring allreduce on 4 ranks = 6 phases x (send + recv) x 4 ranks = 48.
expect 0 "" sim $C --size 1M --trace "$tmp/t.json"
head -c 40 "$tmp/t.json" | grep -q '"traceEvents"' || { echo "FAIL: trace header"; fail=1; }
n=$(grep -o '"ph":"X"' "$tmp/t.json" | wc -l)
[ "$n" = 48 ] || { echo "FAIL: trace has $n step events, want 48"; fail=1; }
if command -v python3 >/dev/null; then
  python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/t.json" || { echo "FAIL: trace is not JSON"; fail=1; }
fi

# two collectives at once: pairs {0,1},{2,3} and strided pairs {0,2},{1,3}
# share every GPU link, so each takes twice as long together as alone
expect 0 "" sim $C --size 8M --group 2 --also allreduce:8M:stride=2
grep -q "collectives at once" "$tmp/out" || { echo "FAIL: no concurrency table"; fail=1; }
# 2 phases x 4 MiB at 10 GB/s = 839 us alone; at 5 GB/s together = 1.68 ms
[ "$(grep -c '1.68 ms *839 us' "$tmp/out")" = 2 ] || { echo "FAIL: concurrency times"; cat "$tmp/out"; fail=1; }
# strided groups walked one class at a time (driver.c walk_load): a step's
# cached pair slot came from realloc's garbage, and a ring over 64 servers
# at stride 8 crashed 2 runs in 3 (SIGSEGV in pend_put) before load_phase
# cleared it; three runs, each must finish
for try in 1 2 3; do
  expect 0 "" sim dgx-h100:64 --size 1G --stride 8 --algo ring
done

# strided groups, each link with its own group's bytes: a ring allreduce
# of 64 MiB over 4 ranks (one per server) moves 2 x 3/4 x 64 MiB = 96 MiB
# = 100663296 B through each NIC each way; 4 servers x 8 NICs x 2 = 64
# leaf channels, none over 100 % (a SEND's cached route was keyed by the
# peer's index, and every group reused group 0's: s0.nic0 at 796 %)
expect 0 "" sim dgx-h100:4 --size 64M --stride 8 --algo ring --top 1000
awk '/most loaded links/ {on=1; next} on && /%$/ { u=$NF; sub("%","",u); if (u+0 > 100) bad=1 }
     END { exit bad }' "$tmp/out" || { echo "FAIL: a link over 100 %"; cat "$tmp/out"; fail=1; }
expect 0 "" sim dgx-h100:4 --size 64M --stride 8 --algo ring --top 1000 --json
if command -v python3 >/dev/null; then
  python3 - "$tmp/out" <<'PY' || { echo "FAIL: strided top_links"; fail=1; }
import json, sys
d = json.load(open(sys.argv[1]))
leaf = [l for l in d["top_links"] if l["class"] == "leaf/ib-ndr"]
assert len(leaf) == 64, len(leaf)
assert all(l["moved_B"] == 100663296 for l in leaf), leaf[0]
assert all(l["utilisation"] <= 1 for l in d["top_links"])
PY
fi
# TP pairs then DP pairs (one rank a server): each DP pair is timed on its
# own NIC route, as the event-by-event run times it (64 MiB over a 2-rank
# ring: 64 MiB through a 49.7 GB/s NIC, 1.35 ms), not over the TP pairs'
# NVLink (188 us while routes were cached by peer index)
expect 0 "" sim dgx-h100:2 --size 64M --group 2 --also allreduce:64M:stride=8 --json
t1=$(grep '"time_s"' "$tmp/out")
expect 0 "" sim dgx-h100:2 --size 64M --group 2 --also allreduce:64M:stride=8 --json --no-reuse
t2=$(grep '"time_s"' "$tmp/out")
[ -n "$t1" ] && [ "$t1" = "$t2" ] || { echo "FAIL: grouped $t1, event by event $t2"; fail=1; }

# the report's simulated section runs on the default cluster and at scale
"$S" report --section sim >"$tmp/rep" 2>"$tmp/err" || { echo "FAIL: report --section sim"; cat "$tmp/err"; fail=1; }
grep -q "Simulated collectives" "$tmp/rep" && grep -q "^  ecmp" "$tmp/rep" && grep -q "at scale" "$tmp/rep" ||
  { echo "FAIL: report sim section content"; cat "$tmp/rep"; fail=1; }

# async and no-reuse runs give the same time on this symmetric case
t1=$("$S" sim $C --size 1M --json | grep '"time_s"')
t2=$("$S" sim $C --size 1M --json --no-reuse | grep '"time_s"')
t3=$("$S" sim $C --size 1M --json --mode async | grep '"time_s"')
[ "$t1" = "$t2" ] && [ "$t1" = "$t3" ] || { echo "FAIL: times differ: $t1 / $t2 / $t3"; fail=1; }
# No --algo: the ring where it implements the op, else the algorithm
# `strata coll` chooses for that op, size and cluster (issue 14): alltoall on
# dgx-h100:4 is Bruck at 8 KiB and pairwise at 64 MiB in `strata coll`: with
# P = 32 a power of two pairwise pairs ranks by XOR (MPICH), so its first
# g-1 = 7 of P-1 = 31 bulk-synchronous steps stay inside the servers on NVLink
# and only 24 cross the network (1104 us), against the two-level hier's N-1 = 3
# network steps of 8 blocks plus its steps inside (1188 us).
for sz in 8K 64M; do
  want=$("$S" coll dgx-h100:4 --op alltoall --sizes $sz:$sz | sed -n 's/^choice: \([a-z0-9]*\) from.*/\1/p')
  got=$("$S" sim dgx-h100:4 --op alltoall --size $sz | sed -n 's/^simulated: alltoall \([a-z0-9]*\) .*/\1/p')
  [ -n "$want" ] && [ "$want" = "$got" ] || { echo "FAIL: sim alltoall $sz default '$got', coll chooses '$want'"; fail=1; }
done
[ "$want" = pairwise ] || { echo "FAIL: coll's choice at 64M is '$want', want pairwise"; fail=1; }
expect 0 "" sim dgx-h100:4 --op alltoall --size 1M --also alltoall:1M:group=8
# A preset too large for its switches names the option that fits (64-port
# switches hold 64^3/4 = 65,536 NIC ports in 3 tiers; 100,000 need 128).
expect 1 "100000 NICs on the network exceed what 64-port switches join in 3 tier\(s\) \(65536\); add radix=128" sim dgx-h100:12500
# Fat-trees have 1 to 3 tiers (docs/formats.md, docs/topology.md): tiers=4 is refused, naming the range.
expect 1 "tiers=4: expected an integer from 1 to 3" sim dgx-h100:4,tiers=4
exit $fail
