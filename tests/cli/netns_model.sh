#!/usr/bin/env bash
# The namespace cluster of bench/tcp/run.sh (bench/tcp/netns-1g.json: two
# hosts of one rank, a veth shaped to 1 Gbit/s by tbf, link eth-1g-tbf)
# loads, sched's cost model prices its 64 MiB allreduce at the hand-derived
# time, and `strata bench --model` prints that price for ranks across hosts
# (here two ranks on loopback TCP, STRATA_TRANSPORT=tcp: every rank its own
# host, as in the namespaces).
set -u
CLI_TIMEOUT=120
# shellcheck source=../cli_lib.sh
. "$(dirname "$0")/../cli_lib.sh" "$1"
F=${STRATA_SOURCE_DIR:?}/bench/tcp/netns-1g.json

# By hand: tbf charges a TCP segment's frame, 1448 B of payload (MTU 1500
# less 20 B IPv4 and 32 B TCP with timestamps) per 1514 B (+ 14 B MAC
# header): goodput 125e6 x 1448/1514 = 119,550,858.65 B/s per direction.
# Recursive doubling at P = 2 (what strata runs, and what the model
# chooses): one step, each rank sends all S while receiving S, so
# T = S / goodput + one message's latency; the latency is the row's 20 us
# endpoint figure + the two pcie4 hops rank -> veth (0.1 us each) = 20.2 us.
# 64 MiB: 67108864 / 119550858.65 + 20.2e-6 = 0.5613617 s.
want64=$(awk 'BEGIN { printf "%.7g", 67108864 / (125e6 * 1448 / 1514) + 20.2e-6 }')
want4=$(awk 'BEGIN { printf "%.7g", 4194304 / (125e6 * 1448 / 1514) + 20.2e-6 }')
near() { # near GOT WANT: |GOT - WANT| <= 1e-5 x WANT (the JSON prints 6 digits)
  awk -v g="$1" -v w="$2" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(d <= 1e-5 * w) }'
}

expect 0 "" topo show "$F"
grep -q "^servers    2" "$tmp/out" || { echo "FAIL: not 2 servers:"; cat "$tmp/out"; fail=1; }
grep -q "eth-1g-tbf x1  0.1196 GB/s per direction" "$tmp/out" ||
  { echo "FAIL: the veth link is not eth-1g-tbf at 0.1196 GB/s:"; cat "$tmp/out"; fail=1; }

# the endpoints are the namespaces' CPUs (the file has no accelerator):
# named cpu, not accel
grep -q "^devices    5: cpu 2 nic 2 switch 1$" "$tmp/out" ||
  { echo "FAIL: the endpoints are not named cpu:"; cat "$tmp/out"; fail=1; }

# the row's latency is its 20 us endpoint figure (latency_us and switch_us
# are 0): one message through one switch = 0 + 0 + 20 us
expect 0 "" link eth-1g-tbf
grep -q "^  latency        20 us endpoints once = 20 us a message through one switch$" "$tmp/out" ||
  { echo "FAIL: link eth-1g-tbf does not print its 20 us endpoint latency:"; grep latency "$tmp/out"; fail=1; }

expect 0 "" coll "$F" --sizes 64M:64M --json
got=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["sizes"][0]
print(s["chosen"], [a["time_s"] for a in s["algos"] if a["algo"]=="recdbl"][0])' "$tmp/out")
[ "${got% *}" = recdbl ] || { echo "FAIL: the model chooses ${got% *}, not recdbl, at 64 MiB"; fail=1; }
near "${got#* }" "$want64" || { echo "FAIL: 64 MiB allreduce priced ${got#* } s, by hand $want64 s"; fail=1; }

# join_ranks OUT ERR TOKEN HOSTS ARGS...: one `strata ARGS` rank per entry of
# HOSTS (comma-separated STRATA_HOST names; "" for two ranks on no named
# host), joined over TCP, rank r's stdout in $tmp/OUTr and stderr in
# $tmp/ERRr. The rendezvous port: a listening socket bound to port 0 here and
# handed to rank 0 as STRATA_ROOT_FD, as `strata run` does (launch.c), so no
# other process on the machine (another job's rendezvous, derived from its
# token anywhere in 20000-39999) can hold or take it. A fixed port (29600 +
# pid % 300 before) could collide when many test runs share the machine.
join_ranks() {
  python3 - "$S" "$tmp" "$@" <<'PY'
import os, socket, subprocess, sys
strata, tmp, out, err, token, hosts = sys.argv[1:7]
args = sys.argv[7:]
hosts = hosts.split(',') if hosts else ['', '']
lsn = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
lsn.bind(('127.0.0.1', 0))
lsn.listen(128)
env = dict(os.environ, STRATA_TRANSPORT='tcp', STRATA_SIZE=str(len(hosts)), STRATA_TIMEOUT='60',
           STRATA_ROOT='127.0.0.1:%d' % lsn.getsockname()[1], STRATA_TOKEN=token)
ranks = []
for r in reversed(range(len(hosts))):
    e = dict(env, STRATA_RANK=str(r))
    if hosts[r]:
        e['STRATA_HOST'] = hosts[r]
        del e['STRATA_TRANSPORT']  # ranks of one host share memory, hosts use TCP
    if r == 0:
        e['STRATA_ROOT_FD'] = str(lsn.fileno())
    ranks.append(subprocess.Popen(
        ['timeout', '120', strata] + args, env=e,
        stdout=open('%s/%s%d' % (tmp, out, r), 'w'), stderr=open('%s/%s%d' % (tmp, err, r), 'w'),
        pass_fds=(lsn.fileno(),) if r == 0 else ()))
lsn.close()
for p in ranks:
    p.wait()
PY
}

# strata bench --model: two ranks joined over TCP; rank 0 prints the model
# column from the cluster (4 MiB: 4194304 / 119550858.65 + 20.2e-6 s).
join_ranks rank err netns-model-$$ "" bench allreduce --join --model "$F" -b 4M -e 4M -n 1 -w 0 --json ||
  { echo "FAIL: could not start the two ranks"; fail=1; }
got=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["rows"][0]["model_s"])' \
  "$tmp/rank0" 2>/dev/null)
near "${got:-0}" "$want4" || { echo "FAIL: bench --model prints ${got:-nothing} s at 4 MiB, by hand $want4 s"; cat "$tmp/err0" "$tmp/err1"; fail=1; }

# Hosts of two ranks (tests/data/netns-1g-2x2.json; here two pretend hosts,
# STRATA_HOST a and b, on loopback): bench gives the runtime the cluster's
# machine and prices the schedule the runtime's choice runs. Allgather of
# n = 1 MiB on 2 hosts x 2: the two-level schedule is one step inside
# (N·n/P = n/2 over upi1, two equal-cost paths of 20.8 GB/s = 41.6 GB/s,
# 50 ns) and one across (n/4 per rank, the host's two ranks sharing its one
# port: 119550858.65 / 2 B/s each, 20.2 us): 4418.33 us; the flat ring (what
# the model column priced before) is 3 x (20.2 us + n/4 / 119550858.65) =
# 6638.82 us, so the choice is two-level.
wanth=$(awk 'BEGIN { b = 125e6 * 1448 / 1514; n = 1048576
  printf "%.7g", 50e-9 + n / 2 / 41.6e9 + 20.2e-6 + n / 4 / (b / 2) }')
join_ranks hrank herr netns-model2-$$ a,a,b,b bench allgather --join \
  --model "$STRATA_SOURCE_DIR/tests/data/netns-1g-2x2.json" -b 1M -e 1M -n 1 -w 0 ||
  { echo "FAIL: could not start the four ranks"; fail=1; }
got=$(awk '$1 == 1048576 { print $(NF-1) * 1e-6 }' "$tmp/hrank0")
near "${got:-0}" "$wanth" || { echo "FAIL: bench --model on 2 hosts x 2 prints ${got:-nothing} s at 1 MiB allgather, by hand (two-level) $wanth s"; cat "$tmp/hrank0" "$tmp/herr0" "$tmp/herr2"; fail=1; }
grep -q "^# choice across hosts priced on: the cluster .*netns-1g-2x2.json$" "$tmp/hrank0" ||
  { echo "FAIL: bench does not say the runtime's choice prices on the cluster:"; cat "$tmp/hrank0"; fail=1; }

# the cluster must hold the job: 2 local ranks share one host, 3 ranks are not 2
timeout 60 "$S" bench allreduce -P 2 --model "$F" -b 8 -e 8 -n 1 -w 0 >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc = 1 ] && grep -q "^strata bench: --model .*: the cluster has several servers but this job's ranks share one host" "$tmp/err" ||
  { echo "FAIL: local ranks on a 2-host cluster: rc $rc"; cat "$tmp/err"; fail=1; }
timeout 60 "$S" bench allreduce -P 3 --model "$F" -b 8 -e 8 -n 1 -w 0 >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc = 1 ] && grep -q "^strata bench: --model .*: the cluster has 2 ranks, this job 3$" "$tmp/err" ||
  { echo "FAIL: 3 ranks on a 2-rank cluster: rc $rc"; cat "$tmp/err"; fail=1; }
timeout 60 "$S" bench allreduce -P 2 --model "$STRATA_SOURCE_DIR/data/presets/dgx-h100.json" -b 8 -e 8 -n 1 -w 0 >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc = 1 ] && grep -q "^strata bench: --model .*: the cluster has 8 ranks, this job 2$" "$tmp/err" ||
  { echo "FAIL: a preset file without \"measured\" is not taken as a cluster: rc $rc"; cat "$tmp/err"; fail=1; }
expect 2 "cannot open" bench allreduce --model "$tmp/none.json"
exit $fail
