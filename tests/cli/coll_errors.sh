#!/usr/bin/env bash
# strata coll: exit codes and one-line errors on stderr. Bad flags exit 2,
# a cluster or algorithm that does not fit exits 1; nothing crashes.
set -u
S=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# expect RC STDERR_REGEX ARGS...
expect() {
  local want=$1 re=$2; shift 2
  timeout 20 "$S" "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  if [ "$rc" != "$want" ]; then echo "FAIL: strata $* -> rc $rc, want $want"; cat "$tmp/err"; fail=1; return; fi
  if [ -n "$re" ] && ! grep -Eq -- "$re" "$tmp/err"; then
    echo "FAIL: strata $*: stderr does not match /$re/:"; cat "$tmp/err"; fail=1; return
  fi
  if [ "$want" != 0 ] && [ "$(wc -l <"$tmp/err")" != 1 ]; then
    echo "FAIL: strata $*: error is not one line:"; cat "$tmp/err"; fail=1
  fi
}

C=railft:servers=2,gpus=8
expect 2 "missing CLUSTER" coll
expect 2 "unknown collective 'foo'" coll $C --op foo
expect 2 "unknown algorithm 'fast'" coll $C --algo fast
expect 2 "--sizes expects LO:HI" coll $C --sizes 8
expect 2 "--sizes needs 1 <= LO <= HI" coll $C --sizes 8:4
expect 2 "expects a size" coll $C --sizes 8:lots
expect 2 "expects a size" coll $C --explain -3
expect 2 "--op needs a value" coll $C --op
expect 2 "unknown option '--bogus'" coll $C --bogus
expect 2 "unexpected argument 'x'" coll $C x
expect 1 "unknown cluster" coll nope:3
expect 1 "ring does not implement alltoall" coll $C --op alltoall --algo ring
expect 1 "hier needs several servers" coll ring:8 --algo hier
expect 1 "innet needs switches that reduce" coll torus:4x4 --algo innet
expect 0 "" coll $C --sizes 1:1
expect 0 "" coll $C --op barrier --json
expect 0 "" coll $C --help
grep -q "where the time goes" <("$S" coll $C --explain 1M) || { echo "FAIL: --explain"; fail=1; }
exit $fail
