#!/usr/bin/env bash
# bench/tcp/run.sh — strata's allreduce across two "hosts" (network
# namespaces joined by a veth pair), the link shaped to 1 Gbit/s with tbf on
# both ends, against what the shaped link can carry.
#
# Usage: bash bench/tcp/run.sh BUILD_DIR [RATE]   (root; RATE default 1gbit)
#   env: ITERS (timed calls per size, default 5), OP (default allreduce),
#   BURST (tbf burst, default 1mb)
#
# Bound (P = 2, one rank per host): both algorithms strata picks at P = 2
# (recursive doubling; the ring is the same exchange) send S bytes each way
# at once, so T >= S / goodput, busbw (= algbw at P = 2) <= goodput. tbf
# counts every byte the veth sends: an Ethernet frame of 1514 B (14 B MAC
# header + 1500 B MTU) carries 1448 B of TCP payload (20 B IPv4 + 32 B TCP
# header with timestamps, RFC 7323), so goodput = 125 MB/s x 1448/1514 =
# 119.5 MB/s at 1 Gbit/s; strata's 48 B per 256 KiB frame costs 0.02 %
# more. The ACKs travel the other way, inside the other direction's frames
# or as 66 B packets, and count against that direction's tbf too (one per
# two segments at most: <= 2.2 %), so the bound is 117-119.5 MB/s.
#
# Prediction: at 1gbit the ranks run with --model bench/tcp/netns-1g.json,
# the cluster file of these namespaces (link eth-1g-tbf: tbf rate x the TCP
# goodput share 1448/1514 = 119.55 MB/s per direction, + 20.2 us per
# message), so the model column is sched's cost of the algorithm run
# (recursive doubling at P = 2: S / 119.55 MB/s + 20.2 us; 64 MiB:
# 67108864 / 119550859 + 20.2e-6 = 0.56136 s). The ACKs are not in it: the
# prediction is the upper end of the bound above. Another RATE: no model.
set -u
BUILD=${1:?usage: run.sh BUILD_DIR [RATE]}
RATE=${2:-1gbit}
STRATA=$BUILD/tools/strata/strata
MODEL=()
[ "$RATE" = 1gbit ] && MODEL=(--model "$(cd "$(dirname "$0")" && pwd)/netns-1g.json")
[ "$(id -u)" = 0 ] || { echo "needs root (network namespaces)"; exit 77; }
A=strata-bench-$$-a B=strata-bench-$$-b
cleanup() {
    for n in $A $B; do
        for p in $(ip netns pids $n 2>/dev/null); do kill -9 $p 2>/dev/null; done
        ip netns del $n 2>/dev/null
    done
}
trap cleanup EXIT
ip netns add $A && ip netns add $B || exit 1
ip link add eth0 netns $A type veth peer name eth0 netns $B
for n in $A $B; do
    ip -n $n link set lo up
    ip -n $n link set eth0 up
    # tbf: rate, a burst of 1 MiB (BURST; above the 64 KiB GSO packets a
    # veth passes: a 64 KiB bucket held the link to 0.02 GB/s; over a 64 MiB
    # transfer the bucket can add at most 1/64 to the rate) and 50 ms of queue
    tc -n $n qdisc add dev eth0 root tbf rate $RATE burst ${BURST:-1mb} latency 50ms
done
ip -n $A addr add 10.232.0.1/24 dev eth0
ip -n $B addr add 10.232.0.2/24 dev eth0
TOKEN=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
echo "# $(date -u +%F) load $(cut -d' ' -f1-3 /proc/loadavg); veth shaped: tbf rate $RATE on both ends"
for r in 0 1; do
    n=$([ $r = 0 ] && echo $A || echo $B)
    ip netns exec $n env STRATA_RANK=$r STRATA_SIZE=2 STRATA_ROOT=10.232.0.1:29500 \
        STRATA_TOKEN=$TOKEN STRATA_TIMEOUT=120 \
        "$STRATA" bench ${OP:-allreduce} --join -b 1M -e 64M -f 4 -w 1 -n ${ITERS:-5} "${MODEL[@]}" >/tmp/strata-bench-tcp.$r 2>&1 &
done
wait
cat /tmp/strata-bench-tcp.0
# what each end's tbf passed and dropped (a drop costs TCP a retransmit and
# a halved window: time the model does not price), and the retransmits
for n in $A $B; do
    echo "# tbf ${n##*-}: $(tc -n $n -s qdisc show dev eth0 | grep -o 'Sent.*)'); TCP segments" \
        "retransmitted: $(ip netns exec $n nstat -asz TcpRetransSegs 2>/dev/null | awk '/TcpRetransSegs/ {print $2}')"
done
echo "# bound at $RATE: busbw <= 0.1195 GB/s (1 Gbit/s x 1448/1514; see the header of this script)"
