#!/usr/bin/env bash
# The optional accelerator probe (-DSTRATA_CUDA=ON, src/probe/cuda.c) builds
# and links where a CUDA toolkit is found, warnings as errors, and its
# driver (bench/probe/accel_probe) runs: on a host without a GPU it says so
# in one line and exits 0; with GPUs it prints a host<->device line per
# device. No toolkit: skipped (77) with the reason. First, on every host,
# the configuration without a toolkit (hidden from CMake) is checked. The build goes to a
# temporary directory (only the probe's driver and the library under it:
# about 30 s of CPU). Usage: cuda_build.sh SOURCE_DIR
set -u
src=$1
fail() { echo "FAIL: $*"; exit 1; }
# Without a toolkit (hidden from find_package here, so this runs on every
# host): -DSTRATA_CUDA=ON configures, says why the accelerator probe is
# skipped, and builds no accel_probe target. Configure only (a few seconds).
none=$(mktemp -d /tmp/strata-nocuda-XXXXXX)
cmake -S "$src" -B "$none" -DCMAKE_BUILD_TYPE=Release -DSTRATA_CUDA=ON \
    -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON >"$none/configure.log" 2>&1 ||
    { cat "$none/configure.log"; rm -rf "$none"; fail "configure without a toolkit"; }
grep -q "STRATA_CUDA: skipped: no CUDA toolkit found" "$none/configure.log" ||
    { cat "$none/configure.log"; rm -rf "$none"; fail "no reason given for skipping the CUDA probe"; }
grep -q "accel_probe" "$none/build.ninja" "$none/Makefile" 2>/dev/null &&
    { rm -rf "$none"; fail "accel_probe is a target without a toolkit"; }
rm -rf "$none"
echo "ok: without a toolkit, -DSTRATA_CUDA=ON configures and says: STRATA_CUDA: skipped: no CUDA toolkit found"
nvcc=$(command -v nvcc || true)
for d in "${CUDA_HOME:-}" "${CUDA_PATH:-}" /usr/local/cuda; do
    [ -z "$nvcc" ] && [ -n "$d" ] && [ -x "$d/bin/nvcc" ] && nvcc=$d/bin/nvcc
done
if [ -z "$nvcc" ]; then
    echo "SKIP: no CUDA toolkit (nvcc not on PATH, in \$CUDA_HOME, \$CUDA_PATH or /usr/local/cuda)"
    exit 77
fi
root=$(cd "$(dirname "$nvcc")/.." && pwd)
tmp=$(mktemp -d /tmp/strata-cuda-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cmake -S "$src" -B "$tmp" -DCMAKE_BUILD_TYPE=Release -DSTRATA_WERROR=ON -DSTRATA_CUDA=ON \
    -DCUDAToolkit_ROOT="$root" >"$tmp/configure.log" 2>&1 || { cat "$tmp/configure.log"; fail "configure"; }
grep -q "STRATA_CUDA: CUDA" "$tmp/configure.log" || { cat "$tmp/configure.log"; fail "toolkit at $root not found by CMake"; }
grep "STRATA_CUDA:" "$tmp/configure.log"
cmake --build "$tmp" -j2 --target accel_probe >"$tmp/build.log" 2>&1 || { tail -40 "$tmp/build.log"; fail "build"; }
out=$(timeout 120 "$tmp/bench/probe/accel_probe" 2>&1)
rc=$?
echo "$out"
[ $rc -eq 0 ] || fail "accel_probe exited $rc"
n=$(printf '%s\n' "$out" | wc -l)
if printf '%s' "$out" | grep -q "no CUDA device is visible"; then
    [ "$n" -eq 1 ] || fail "no GPU should be one line, got $n"
else
    printf '%s' "$out" | grep -q "gpu0 pinned   H2D" || fail "no host<->device line for gpu0"
fi
echo "ok: the CUDA probe builds, links and runs"
