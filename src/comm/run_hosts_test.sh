#!/usr/bin/env bash
# `strata run --hosts` without root: usage errors (exit 2), the environment
# and placement each rank gets, the token kept off every command line, the
# quick collective matrix on two pretend hosts, and a mismatch found on one
# host reported with its cause on the other. The remote shell is
# fake_rsh (below): it runs the command here with STRATA_HOST set to the host
# name, so ranks "on" one host share memory and the others use TCP.
# $1 = strata, $2 = comm_coll_test.
set -u
strata=$1 coll=$2
tmp=$(mktemp -d /tmp/strata-hosts-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
expect_rc() { # rc command...
  local want=$1; shift
  "$@" >"$tmp/out" 2>&1; local rc=$?
  [ $rc -eq "$want" ] || { cat "$tmp/out"; fail "'$*' exited $rc, expected $want"; }
}
rsh=$tmp/fake_rsh
printf '#!/bin/sh\nhost=$1\nshift\nFAKE_HOST=$host STRATA_HOST=$host exec "$@"\n' >"$rsh"
chmod +x "$rsh"

expect_rc 2 "$strata" run --hosts
expect_rc 2 "$strata" run --hosts a:0 -- true
expect_rc 2 "$strata" run --hosts a:x -- true
expect_rc 2 "$strata" run --hosts a:40,b:25 -- true
expect_rc 2 "$strata" run --hosts a,,b -- true
expect_rc 2 "$strata" run -n 2 --hosts a -- true
expect_rc 2 "$strata" run --rsh ssh -n 2 -- true
expect_rc 2 "$strata" run --hosts a:2
grep -q "at most 64" <("$strata" run --hosts a:40,b:25 -- true 2>&1) || fail "no message for 65 ranks"

# placement: h1:2,h2:1 puts ranks 0,1 (local 0,1) on a and rank 2 (local 0) on b
expect_rc 0 "$strata" run --hosts a:2,b:1 --rsh "$rsh" --root 127.0.0.1:1 -- sh -c '
  test "$STRATA_SIZE" = 3 && test -n "$STRATA_TOKEN" && test "$STRATA_ROOT" = 127.0.0.1:1 || exit 9
  case "$STRATA_RANK:$STRATA_LOCAL_RANK:$FAKE_HOST" in 0:0:a|1:1:a|2:0:b) ;; *) exit 8;; esac'
# without --root: the first host, the port derived from the token (MASTER_ADDR)
expect_rc 0 "$strata" run --hosts a:1 --rsh "$rsh" -- sh -c 'test "$MASTER_ADDR" = a'
# the first failure's code; the token on no command line of any process
expect_rc 7 "$strata" run --hosts a:1,b:1 --rsh "$rsh" -- sh -c '[ "$STRATA_RANK" = 1 ] && exit 7; sleep 5'
expect_rc 0 "$strata" run --hosts a:2 --rsh "$rsh" -- bash -c '
  for p in /proc/[0-9]*/cmdline; do tr "\0" " " <"$p"; echo; done 2>/dev/null >"'"$tmp"'/cmd.$STRATA_RANK"
  ! grep -q -F -f <(echo "$STRATA_TOKEN") "'"$tmp"'/cmd.$STRATA_RANK"'

# the quick matrix, 2 ranks on a and 1 on b: exact. The root's port is below
# the ephemeral range (32768..60999), where no other test's connection can
# hold it; a port another process listens on is retried with the next one.
ok=
for try in 1 2 3 4 5; do
  port=$((20000 + ($$ * 7 + try * 977) % 12768))
  COLL_TEST_RANK_MODE=1 COLL_TEST_QUICK=1 COLL_TEST_EXPECT_HOSTS=2 STRATA_TIMEOUT=120 \
    "$strata" run --hosts a:2,b:1 --rsh "$rsh" --root 127.0.0.1:$port -- "$coll" >"$tmp/coll" 2>&1 &&
    { ok=1; break; }
  grep -q "cannot listen at 127.0.0.1:$port: Address already in use" "$tmp/coll" || break
  echo "port $port taken; trying another"
done
[ -n "$ok" ] || { tail -5 "$tmp/coll"; fail "the matrix through --hosts failed"; }
grep -q " 0 errors" "$tmp/coll" || fail "matrix: $(tail -3 "$tmp/coll")"
grep "calls checked" "$tmp/coll"

# A mismatch found on host a reaches host b with its cause: rank 1 (a)
# allreduces 4 floats where ranks 0 (a) and 2 (b) allreduce 2. At 3 ranks
# the 8-byte call is recursive doubling: rank 2 sends its vector to rank 0,
# ranks 0 and 1 exchange (where the mismatch is found: each names the
# other's call), and rank 0 would send the sum back — so rank 2 never sees
# rank 1's call, and learns the cause from a failure notice of rank 0 or 1
# (whichever stream it reads first). Before the notices it reported "rank 1
# (pid ...): closed its connection (it exited or failed)" (seen on main
# 230cac0). Ranks 0 and 1 report the mismatch themselves or through host
# a's failure word.
expect_rc 1 "$strata" run --hosts a:2,b:1 --rsh "$rsh" --root 127.0.0.1:$port -- sh -c '
  e=8; [ "$STRATA_RANK" = 1 ] && e=16
  STRATA_TIMEOUT=60 "$0" bench allreduce --join -b $e -e $e -n 3 -w 1 2>"'"$tmp"'/mm.$STRATA_RANK" >/dev/null' "$strata"
for r in 0 1; do
  grep -q "mismatched calls: rank $r called\|rank [01] found ranks calling with different arguments" "$tmp/mm.$r" ||
    fail "rank $r (host a) did not report the mismatch: $(cat "$tmp/mm.$r")"
done
grep -q "rank 2: allreduce: rank [01] (pid [0-9]* on another host) reported: rank [01] found ranks calling with different arguments (communicator failed)" "$tmp/mm.2" ||
  fail "rank 2 (host b) did not report the mismatch found on host a: $(cat "$tmp/mm.2")"
echo "run_hosts_test ok"
