#!/usr/bin/env bash
# bench/tcp/bound.sh — what loopback TCP carries for a ring allreduce's exact
# traffic (bench/tcp/tcpbound.c), the sweep recorded in bench/README.md "tcp,
# fewer copies": 64 MiB at P = 2 and P = 4, 2 streams per pair, 256 KiB
# pieces, autotuned socket buffers (strata's settings) in each copy mode,
# then piece size, stream count and fixed socket buffers at P = 2 (raw).
#
# Usage: bash bench/tcp/bound.sh BUILD_DIR [ROUNDS]
#        (cmake --build BUILD_DIR --target tcp_bound; ROUNDS default 7).
#        On a loaded machine run it as root under
#        `flock /tmp/strata-rt.lock chrt -f 50` (the waits sleep in epoll).
set -u
BUILD=${1:?usage: bound.sh BUILD_DIR [ROUNDS]}
ROUNDS=${2:-7}
EXE=$BUILD/bench/tcp/tcp_bound
[ -x "$EXE" ] || { echo "bound.sh: $EXE not built (cmake --build $BUILD --target tcp_bound)"; exit 77; }
echo "# $(date -u +'%F %T') load $(cut -d' ' -f1-3 /proc/loadavg)"
for p in 2 4; do
    for m in raw frame reduce rrecv; do
        timeout 120 "$EXE" -p $p -m $m -r "$ROUNDS" || exit 1
    done
done
for c in 64K 1M 4M; do timeout 120 "$EXE" -p 2 -m raw -c $c -r "$ROUNDS" || exit 1; done
for k in 1 4; do timeout 120 "$EXE" -p 2 -m raw -k $k -r "$ROUNDS" || exit 1; done
for b in 256K 4M; do timeout 120 "$EXE" -p 2 -m raw -b $b -r "$ROUNDS" || exit 1; done
echo "# $(date -u +'%F %T') load $(cut -d' ' -f1-3 /proc/loadavg)"
