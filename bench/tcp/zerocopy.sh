#!/usr/bin/env bash
# bench/tcp/zerocopy.sh — plain send against MSG_ZEROCOPY and vmsplice +
# splice for strata's 256 KiB frames (zerocopy.c), paired round by round,
# on loopback and (as root) across two network namespaces joined by an
# unshaped veth pair. Prints each run's sender and receiver wall and CPU
# time and how many zerocopy sends the kernel copied after all.
#
# Usage: bash bench/tcp/zerocopy.sh BUILD_DIR [ROUNDS] [CHUNK] [TOTAL]
#        (cmake --build BUILD_DIR --target tcp_zerocopy first)
set -u
BUILD=${1:?usage: zerocopy.sh BUILD_DIR [ROUNDS] [CHUNK] [TOTAL]}
ROUNDS=${2:-3} CHUNK=${3:-262144} TOTAL=${4:-1073741824}
Z=$BUILD/bench/tcp/tcp_zerocopy
[ -x "$Z" ] || { echo "zerocopy: $Z not built (cmake --build $BUILD --target tcp_zerocopy)"; exit 77; }
run() { # run WHERE MODE: one transfer; WHERE = lo or netns
    local port=$((34000 + RANDOM % 1000)) rx
    rx=$(mktemp)
    if [ "$1" = lo ]; then
        "$Z" recv $port >"$rx" & sleep 0.2
        echo "$(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg) lo    $("$Z" send "$2" 127.0.0.1 $port "$TOTAL" "$CHUNK") | $(cat "$rx")"
    else
        ip netns exec $B "$Z" recv $port >"$rx" & sleep 0.2
        echo "$(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg) netns $(ip netns exec $A "$Z" send "$2" 10.233.0.2 $port "$TOTAL" "$CHUNK") | $(cat "$rx")"
    fi
    wait
    rm -f "$rx"
}
WHERE=lo
if [ "$(id -u)" = 0 ]; then
    A=strata-zc-$$-a B=strata-zc-$$-b
    trap 'ip netns del $A 2>/dev/null; ip netns del $B 2>/dev/null' EXIT
    if ip netns add $A && ip netns add $B &&
        ip link add eth0 netns $A type veth peer name eth0 netns $B; then
        for n in $A $B; do ip -n $n link set lo up; ip -n $n link set eth0 up; done
        ip -n $A addr add 10.233.0.1/24 dev eth0
        ip -n $B addr add 10.233.0.2/24 dev eth0
        WHERE="lo netns"
    fi
else
    echo "# not root: loopback only"
fi
echo "# $(uname -r); $ROUNDS rounds of $TOTAL B in $CHUNK B sends; cpu = user + sys of that side"
for r in $(seq "$ROUNDS"); do
    for w in $WHERE; do
        for m in plain zc splice; do run $w $m; done
    done
done
