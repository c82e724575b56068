#!/usr/bin/env bash
# scripts/check-deps.sh catches a missing package: with libcmocka-dev left
# out of the main list, it must fail and name cmocka.h (the tests' header)
# and its package; with the real list it must pass. $1 = source dir, $2 =
# build dir (configured and built).
set -u
src=$1 build=$2
fail() { echo "FAIL: $*"; exit 1; }
command -v dpkg >/dev/null || { echo "skipped: no dpkg (not Debian)"; exit 0; }
list=$(bash "$src/scripts/install-deps.sh" --list)
short=$(echo " $list " | sed 's/ libcmocka-dev / /')
[ "$short" != " $list " ] || fail "install-deps.sh --list does not list libcmocka-dev"
out=$(bash "$src/scripts/check-deps.sh" --main-only --main "$short" "$build" 2>&1); rc=$?
[ $rc -eq 1 ] || { echo "$out"; fail "exit $rc without libcmocka-dev, expected 1"; }
echo "$out" | grep -q "/usr/include/cmocka.h (header of the build ($build)) comes from libcmocka-dev" ||
    { echo "$out"; fail "cmocka.h not named"; }
out=$(bash "$src/scripts/check-deps.sh" --main-only "$build" 2>&1) || { echo "$out"; fail "the real list fails"; }
echo "check_deps ok"
