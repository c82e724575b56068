#!/usr/bin/env bash
# netns_test.sh — the runtime across "hosts" made of network namespaces.
#
# Usage: netns_test.sh COLL_TEST TCP_TEST STRATA [CASE...]
#   cases: coll2x2 coll4x1 ipv6 killhost linkdown nojoin stranger hosts
#   (default: all but coll2x2, whose 2 x 2 matrix stranger and hosts run too)
#
# Builds 4 namespaces strata-<pid>-h0..h3 ("hosts"), each with one veth
# (eth0, 10.231.<k>.<i+1>/24 and fd53:5452::<i+1>/64) whose peer sits in a
# fifth namespace strata-<pid>-sw on a bridge br0 — addresses exist only in
# these namespaces, nothing on the machine's own network changes. Ranks run
# with `ip netns exec`; ranks in one namespace share memory (one host
# identity per network namespace, comm_host_id), ranks in different ones
# use TCP. Every namespace, and every process in them, is removed on exit,
# also on failure (trap). Needs root and iproute2: otherwise it prints why
# and exits 77 (CTest: skipped).
#
# Cases (each checked exactly or against a bound):
#   coll2x2 / coll4x1  every collective x operator x type x count of
#                      comm_coll_test, on 2 hosts x 2 ranks and 4 x 1, with
#                      COLL_TEST_QUICK (counts 0, 1, 7, 1023 for every type,
#                      1 M + 3 for fp32 and int32), exact (the full matrix on
#                      pretend hosts is CTest comm_coll_tcp_2x2);
#   ipv6               2 hosts x 1 rank, quick matrix, IPv6 rendezvous and data;
#   killhost           both ranks of h1 SIGKILLed mid-allreduce: h0's ranks
#                      end with a typed error within 2 x the deadline (3 s);
#   linkdown           h1's veth (switch side) set down mid-transfer: every
#                      rank ends with a typed error within 2 x the deadline;
#   nojoin             h1's ranks never start: h0's ranks fail start-up with
#                      STRATA_ERR_TIMEOUT within 2 x the deadline;
#   hosts              `strata run --hosts h0:2,h1:2 --rsh "ip netns exec"`
#                      starts the 2 x 2 quick matrix; it passes exactly;
#   stranger           garbage sent to h0's data listeners while h1's ranks are
#                      late to dial (STRATA_TEST_DIAL_DELAY=5): dropped
#                      and logged, and the job then completes exactly.
# After each case: no process left in the namespaces, no segment of this
# test's own jobs left in /dev/shm (other jobs on the machine keep theirs:
# a segment is /strata-<jobhash>-<pid>-<n>, comm_seg_name, and the test
# counts only its own jobs' hashes).
set -u
COLL=${1:?usage: netns_test.sh COLL_TEST TCP_TEST STRATA [CASE...]}
TCPT=${2:?usage}
STRATA=${3:?usage}
shift 3
CASES=${*:-coll4x1 ipv6 killhost linkdown nojoin stranger hosts}

if [ "$(id -u)" != 0 ]; then
    echo "skipped: network namespaces need root (uid $(id -u))"
    exit 77
fi
if ! command -v ip >/dev/null || ! ip netns list >/dev/null 2>&1; then
    echo "skipped: iproute2 with network namespace support is not available"
    exit 77
fi

P=strata-$$
NS=("$P-h0" "$P-h1" "$P-h2" "$P-h3")
SW=$P-sw
NET=10.231.$(($$ % 200 + 20))
FAIL=0
JOBS=() # the job hashes of this test's jobs (new_job)

# job_hash TOKEN: the job's hash as comm_job_hash makes it, the first 8
# bytes of HMAC-SHA256(key TOKEN, "strata-v2 job" and its NUL) in hex.
# Every coll case checks it against the hash its rank 0 prints, so the two
# cannot drift apart unseen; `strata run` makes its own token, so the hosts
# case takes the hash its rank 0 prints.
job_hash() {
    python3 -c 'import hashlib, hmac, sys
print(hmac.new(sys.argv[1].encode(), b"strata-v2 job\0", hashlib.sha256).hexdigest()[:16])' "$1"
}

cleanup() {
    for n in "${NS[@]}" "$SW"; do
        for pid in $(ip netns pids "$n" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
    done
    sleep 0.2
    for n in "${NS[@]}" "$SW"; do ip netns del "$n" 2>/dev/null; done
    rm -rf "$TMP"
}
TMP=$(mktemp -d /tmp/strata-netns.XXXXXX)
trap cleanup EXIT
trap 'exit 1' INT TERM

setup() {
    ip netns add "$SW" || return 1
    ip -n "$SW" link add br0 type bridge stp_state 0 forward_delay 0 || return 1
    ip -n "$SW" link set br0 up
    ip -n "$SW" link set lo up
    for i in 0 1 2 3; do
        local n=${NS[$i]}
        ip netns add "$n" || return 1
        ip link add "vh$i" netns "$SW" type veth peer name eth0 netns "$n" || return 1
        ip -n "$SW" link set "vh$i" master br0
        ip -n "$SW" link set "vh$i" up
        ip -n "$n" link set lo up
        ip -n "$n" addr add "$NET.$((i + 1))/24" dev eth0
        ip -n "$n" addr add "fd53:5452::$((i + 1))/64" dev eth0 nodad
        ip -n "$n" link set eth0 up
    done
    # no STP: bridge ports forward at once (and ranks retry connecting until
    # their deadline anyway)
    return 0
}

fail() {
    echo "FAIL: $*"
    FAIL=1
}

# After a case: nothing running in the namespaces, nothing new in /dev/shm.
check_clean() {
    local what=$1
    sleep 0.3
    for n in "${NS[@]}"; do
        for pid in $(ip netns pids "$n"); do
            fail "$what: process $pid ($(cat /proc/"$pid"/comm 2>/dev/null)) left in $n"
            kill -9 "$pid" 2>/dev/null
        done
    done
    local now mine
    mine=$(IFS='|'; echo "${JOBS[*]}")
    now=$(ls /dev/shm 2>/dev/null | grep -cE "^strata-($mine)-" || true)
    [ "$now" = 0 ] || fail "$what: $now segment(s) of this test's jobs left in /dev/shm"
}

# start RANK NS LOG PROG VAR=VALUE...: one rank in the background.
start() {
    local r=$1 n=$2 log=$3 prog=$4
    shift 4
    ip netns exec "$n" env STRATA_RANK="$r" STRATA_SIZE="$SIZE" STRATA_ROOT="$ROOT" \
        STRATA_TOKEN="$TOKEN" STRATA_TIMEOUT=60 "$@" timeout 150 "$prog" >"$log" 2>&1 &
}

new_job() {
    SIZE=$1
    ROOT=$2
    TOKEN=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
    JOBS+=("$(job_hash "$TOKEN")")
}

# coll HOSTS PER_HOST ROOT: the full matrix, exact; every rank must exit 0.
coll() {
    local hosts=$1 per=$2 root=$3 what=$4 pids=() r=0
    new_job $((hosts * per)) "$root"
    for h in $(seq 0 $((hosts - 1))); do
        for k in $(seq 1 "$per"); do
            start $r "${NS[$h]}" "$TMP/$what.$r" "$COLL" COLL_TEST_RANK_MODE=1 \
                COLL_TEST_EXPECT_HOSTS="$hosts" $QUICK
            pids+=($!)
            r=$((r + 1))
        done
    done
    for i in "${!pids[@]}"; do
        wait "${pids[$i]}" || fail "$what: rank $i exited $?: $(tail -3 "$TMP/$what.$i")"
    done
    grep -h "calls checked" "$TMP/$what".* | sed "s/^/$what: /"
    grep -q " 0 errors" "$TMP/$what.0" || fail "$what: errors: $(cat "$TMP/$what.0" | tail -5)"
    grep -qx "job ${JOBS[-1]}" "$TMP/$what.0" ||
        fail "$what: rank 0's job hash is not job_hash of its token: $(grep '^job ' "$TMP/$what.0")"
    check_clean "$what"
}

# Outcome lines of comm_tcp_test's external ranks: "rank R call N STATUS SECONDS msg".
outcome_ok() {
    local what=$1 file=$2 limit=$3 line st secs
    line=$(grep -E '^(rank|init) ' "$file" | tail -1)
    [ -n "$line" ] || {
        fail "$what: no outcome in $file: $(tail -2 "$file")"
        return
    }
    st=$(echo "$line" | awk '$1=="rank"{print $5} $1=="init"{print $2}')
    secs=$(echo "$line" | awk '$1=="rank"{print $6} $1=="init"{print $3}')
    [ "$st" != 0 ] || fail "$what: a survivor's call succeeded: $line" 
    awk -v s="$secs" -v l="$limit" 'BEGIN{exit !(s < l)}' ||
        fail "$what: a survivor took ${secs} s (bound $limit s): $line"
    echo "$what: $line"
}

DL=3 # the fault cases' deadline, seconds
# status numbers (include/strata/common.h): 0 OK, -7 TIMEOUT, -8 PEER

# fault WHAT ACTION: 2 hosts x 2 ranks loop allreduces; ACTION runs 1.5 s in.
fault() {
    local what=$1 action=$2 pids=()
    new_job 4 "$NET.1:29411"
    for r in 0 1 2 3; do
        start $r "${NS[$((r / 2))]}" "$TMP/$what.$r" "$TCPT" TCP_TEST_RANK=$DL
        pids+=($!)
    done
    sleep 1.5
    eval "$action"
    local t0=$SECONDS
    for p in "${pids[@]}"; do wait "$p"; done
    [ $((SECONDS - t0)) -le $((2 * DL + 2)) ] || fail "$what: ranks ended $((SECONDS - t0)) s after the fault"
    for r in 0 1 2 3; do
        [ -s "$TMP/$what.$r" ] || continue # a killed rank
        outcome_ok "$what" "$TMP/$what.$r" $((2 * DL))
    done
    check_clean "$what"
}

kill_host1() {
    for pid in $(ip netns pids "${NS[1]}"); do kill -9 "$pid"; done
}

nojoin() {
    local pids=()
    new_job 4 "$NET.1:29412"
    for r in 0 1; do
        start $r "${NS[0]}" "$TMP/nojoin.$r" "$TCPT" TCP_TEST_RANK=$DL STRATA_TIMEOUT=$DL
        pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p"; done
    # rank 0 waits for the missing ranks (timeout); rank 1 then hears it failed
    grep -q "^init -7 " "$TMP/nojoin.0" || fail "nojoin: rank 0: $(cat "$TMP/nojoin.0")"
    for r in 0 1; do
        outcome_ok nojoin "$TMP/nojoin.$r" $((2 * DL))
    done
    check_clean nojoin
}

stranger() {
    local pids=() r
    new_job 4 "$NET.1:29413"
    for r in 0 1 2 3; do # h1's ranks wait 2 s before dialing h0's data listeners
        start $r "${NS[$((r / 2))]}" "$TMP/stranger.$r" "$COLL" COLL_TEST_RANK_MODE=1 \
            COLL_TEST_EXPECT_HOSTS=2 COLL_TEST_QUICK=1 $([ $r -ge 2 ] && echo STRATA_TEST_DIAL_DELAY=5)
        pids+=($!)
    done
    local ports t
    for t in $(seq 40); do # until both h0 ranks' data listeners are open (not the rendezvous)
        sleep 0.1
        ports=$(ip netns exec "${NS[0]}" ss -Hltn | awk '{n=split($4,a,":"); print a[n]}' |
            grep -vx 29413 | sort -u)
        [ "$(echo $ports | wc -w)" -ge 2 ] && break
    done
    for port in $ports; do # garbage from "host" 2, which runs no rank
        ip netns exec "${NS[2]}" bash -c "exec 3<>/dev/tcp/$NET.1/$port && printf 'GET / HTTP/1.0\r\n\r\n%0300d' 0 >&3" 2>/dev/null
    done
    echo "stranger: sent garbage to h0's listening ports: $(echo $ports)"
    # ranks 0 and 1 each listen for h1's streams
    [ "$(echo $ports | wc -w)" -ge 2 ] || fail "stranger: expected 2 data listeners in h0, saw: $ports"
    for i in "${!pids[@]}"; do
        wait "${pids[$i]}" || fail "stranger: rank $i exited $?: $(tail -3 "$TMP/stranger.$i")"
    done
    grep -h "calls checked" "$TMP/stranger.0" | sed "s/^/stranger: /"
    grep -q " 0 errors" "$TMP/stranger.0" || fail "stranger: $(tail -3 "$TMP/stranger.0")"
    grep -q "dropped data connection" "$TMP"/stranger.[01] || fail "stranger: no rank logged dropping the garbage"
    check_clean stranger
}

hosts_case() {
    if ! COLL_TEST_RANK_MODE=1 COLL_TEST_QUICK=1 COLL_TEST_EXPECT_HOSTS=2 STRATA_TIMEOUT=60 \
        timeout 150 "$STRATA" run --hosts "${NS[0]}:2,${NS[1]}:2" --rsh "ip netns exec" \
        --root "$NET.1:29414" -- "$COLL" >"$TMP/hosts.log" 2>&1; then
        fail "hosts: strata run --hosts failed: $(tail -5 "$TMP/hosts.log")"
    fi
    grep "calls checked" "$TMP/hosts.log" | sed 's/^/hosts: /'
    grep -q " 0 errors" "$TMP/hosts.log" || fail "hosts: $(tail -3 "$TMP/hosts.log")"
    local job
    job=$(sed -n 's/^job \([0-9a-f]\{16\}\)$/\1/p' "$TMP/hosts.log")
    [ -n "$job" ] && JOBS+=("$job") || fail "hosts: rank 0 printed no job hash"
    check_clean hosts
}

setup || {
    echo "FAIL: could not build the namespaces"
    exit 1
}
for c in $CASES; do
    case $c in
    coll2x2) QUICK=COLL_TEST_QUICK=1 coll 2 2 "$NET.1:29401" coll2x2 ;;
    coll4x1) QUICK=COLL_TEST_QUICK=1 coll 4 1 "$NET.1:29402" coll4x1 ;;
    ipv6) QUICK=COLL_TEST_QUICK=1 coll 2 1 "[fd53:5452::1]:29403" ipv6 ;;
    killhost) fault killhost kill_host1 ;;
    linkdown)
        fault linkdown "ip -n $SW link set vh1 down"
        ip -n "$SW" link set vh1 up # the later cases need h1 again
        ;;
    nojoin) nojoin ;;
    stranger) stranger ;;
    hosts) hosts_case ;;
    *) fail "unknown case $c" ;;
    esac
done
[ $FAIL = 0 ] && echo "netns: all cases passed" || echo "netns: FAILED"
exit $FAIL
