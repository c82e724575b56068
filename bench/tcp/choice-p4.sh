#!/usr/bin/env bash
# bench/tcp/choice-p4.sh — the cross-host allreduce's pick against the three
# algorithms forced: 4 ranks, TCP only on loopback (as vs-mpi-tcp.sh), one
# mpirun per STRATA_ALGO value (auto, recdbl, rabenseifner, ring), the sizes
# around the cost model's switch points. Each line: the strata median in µs
# (vsmpi's table; Open MPI's run beside it in the same rounds).
#
# Usage: [ALGOS="auto ring"] bash bench/tcp/choice-p4.sh BUILD_DIR [ROUNDS] [SIZES...]
set -u
BUILD=${1:?usage: choice-p4.sh BUILD_DIR [ROUNDS] [SIZES...]}
ROUNDS=${2:-5}
shift $(( $# >= 2 ? 2 : 1 ))
SIZES=${*:-8 16K 64K 256K 512K 1M 4M}
EXE=$BUILD/bench/vs-mpi/vsmpi-ompi
[ -x "$EXE" ] || { echo "choice-p4: $EXE not built (cmake --build $BUILD --target vsmpi)"; exit 77; }
TOKEN=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
for algo in ${ALGOS:-auto recdbl rabenseifner ring}; do
    echo "# $(date -u +'%F %T') load $(cut -d' ' -f1-3 /proc/loadavg); 4 ranks, TCP only, STRATA_ALGO=$algo"
    # shellcheck disable=SC2086
    timeout 300 mpirun.openmpi --allow-run-as-root --oversubscribe -np 4 \
        --mca btl tcp,self --mca pml ob1 --mca btl_tcp_if_include lo \
        -x STRATA_TRANSPORT=tcp -x STRATA_TOKEN="$TOKEN" -x STRATA_TIMEOUT=300 \
        -x STRATA_ALGO="$algo" \
        "$EXE" -n -R -r "$ROUNDS" -s $SIZES
done
