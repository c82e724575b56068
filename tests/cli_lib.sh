# Shared by the shell tests in tests/cli/: source it with the strata binary
# as $1. Sets S (the binary), tmp (a scratch directory removed on exit),
# fail (0 until a check fails) and expect().
#   expect RC STDERR_REGEX ARGS...  runs `strata ARGS` (bounded by
#   CLI_TIMEOUT seconds, default 120), checks the exit code, that stderr
#   matches the regex (when not empty) and that an error is one line; with
#   CLI_ERROR_STDOUT_EMPTY=1 also that a failing command printed nothing.
S=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

expect() {
  local want=$1 re=$2; shift 2
  timeout "${CLI_TIMEOUT:-120}" "$S" "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  if [ "$rc" != "$want" ]; then echo "FAIL: strata $* -> rc $rc, want $want"; cat "$tmp/err"; fail=1; return; fi
  if [ -n "$re" ] && ! grep -Eq -- "$re" "$tmp/err"; then
    echo "FAIL: strata $*: stderr does not match /$re/:"; cat "$tmp/err"; fail=1; return
  fi
  if [ "$want" != 0 ] && [ "$(wc -l <"$tmp/err")" != 1 ]; then
    echo "FAIL: strata $*: error is not one line:"; cat "$tmp/err"; fail=1
  fi
  if [ "$want" != 0 ] && [ "${CLI_ERROR_STDOUT_EMPTY:-0}" = 1 ] && [ -s "$tmp/out" ]; then
    echo "FAIL: strata $*: failed but wrote to stdout"; fail=1
  fi
}
