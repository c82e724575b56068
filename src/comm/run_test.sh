#!/usr/bin/env bash
# `strata run` and `strata bench` from the shell: exit codes, usage errors,
# a rank killed by SIGKILL (non-zero exit, survivors report a peer failure,
# nothing left in /dev/shm). $1 = strata, $2 = comm_fault_test (rank helper).
set -u
strata=$1 helper=$2
fail() { echo "FAIL: $*"; exit 1; }
expect_rc() { # rc command...
  local want=$1; shift
  "$@" >/tmp/strata-run-test.$$ 2>&1; local rc=$?
  [ $rc -eq "$want" ] || { cat /tmp/strata-run-test.$$; fail "'$*' exited $rc, expected $want"; }
}

# usage errors: exit 2 with one clear line
expect_rc 2 "$strata" run
expect_rc 2 "$strata" run -n 0 -- true
expect_rc 2 "$strata" run -n 2
expect_rc 2 "$strata" run -n x -- true
expect_rc 2 "$strata" run -n 2 --bogus -- true
expect_rc 2 "$strata" bench
expect_rc 2 "$strata" bench allfoo -P 2
expect_rc 2 "$strata" bench allreduce -d quad
expect_rc 2 "$strata" bench allreduce -o xor
expect_rc 2 "$strata" bench allreduce --algo magic
expect_rc 2 "$strata" bench allreduce -b 1M -e 8
expect_rc 2 "$strata" bench broadcast -P 2 -r 5
grep -q "unknown collective 'allfoo'" <("$strata" bench allfoo 2>&1) || fail "no message for a bad collective"

# the environment each rank gets; success and the first failure's code
expect_rc 0 "$strata" run -n 3 -- sh -c 'test "$STRATA_SIZE" = 3 && test -n "$STRATA_TOKEN" && case "$STRATA_ROOT" in 127.0.0.1:*) ;; *) exit 9;; esac'
expect_rc 7 "$strata" run -n 3 -- sh -c '[ "$STRATA_RANK" = 2 ] && exit 7; sleep 5'
expect_rc 127 "$strata" run -n 2 -- /nonexistent/program

# signals reach the ranks: SIGTERM to strata run ends them, exit 128 + 15
"$strata" run -n 2 -- sleep 30 & pid=$!
sleep 0.5; kill -TERM $pid; t0=$(date +%s)
wait $pid; rc=$?
[ $rc -eq 143 ] || fail "strata run exited $rc after SIGTERM, expected 143"
[ $(( $(date +%s) - t0 )) -le 3 ] || fail "ranks outlived a forwarded SIGTERM"

# a rank killed mid-allreduce
out=$("$strata" run -n 3 --grace 5 -- "$helper" --rank-kill 2>&1); rc=$?
[ $rc -eq 137 ] || { echo "$out"; fail "strata run exited $rc after a SIGKILL, expected 137"; }
for r in 0 2; do
  line=$(echo "$out" | grep "^rank $r status") || { echo "$out"; fail "rank $r did not report"; }
  set -- $line
  [ "$4" = -8 ] || fail "rank $r status $4, expected -8 (STRATA_ERR_PEER)"
  awk -v t="$6" 'BEGIN { exit !(t <= 20.0) }' || fail "rank $r took $6 s (> 2 x 10 s deadline)"
  hash=$8
done
ls /dev/shm | grep -q "strata-$hash" && fail "/dev/shm still holds strata-$hash-*"

# bench: a small checked run in both semantics, JSON output parses
out=$("$strata" bench allreduce -P 2 -b 8 -e 64K -f 16 -c 1) || fail "bench failed: $out"
echo "$out" | grep -q "# Avg bus bandwidth" || fail "no average line"
echo "$out" | grep -q "Out of bounds values : 0 OK" || fail "bench found wrong values: $out"
"$strata" bench allgather -P 3 -b 1K -e 64K -f 8 --algo ring -c 1 >/dev/null || fail "ring allgather bench"
"$strata" bench alltoall -P 2 -b 1K -e 1M -f 32 -d int8 --json | python3 -m json.tool >/dev/null || fail "bench --json is not JSON"
rm -f /tmp/strata-run-test.$$
echo "run_test ok"
