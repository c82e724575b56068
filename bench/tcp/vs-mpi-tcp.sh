#!/usr/bin/env bash
# bench/tcp/vs-mpi-tcp.sh — strata against Open MPI, both over TCP only, on
# this machine's loopback (no shaping): Open MPI with `--mca btl tcp,self`
# (no shared-memory btl, ob1, the lo interface), strata with
# STRATA_TRANSPORT=tcp (every rank its own host: TCP between every pair,
# STRATA_TCP_STREAMS streams each, default 2). One MPI job per rank count,
# bench/vs-mpi's paired program: each size alternates MPI_Allreduce and
# strata_comm_allreduce on the same buffers, round by round, and prints
# medians and the ratio MPI time / strata time (> 1: strata faster).
#
# Usage: bash bench/tcp/vs-mpi-tcp.sh BUILD_DIR [ROUNDS]   (make vsmpi first:
#        cmake --build BUILD_DIR --target vsmpi; needs scripts/install-deps.sh --bench)
set -u
BUILD=${1:?usage: vs-mpi-tcp.sh BUILD_DIR [ROUNDS]}
ROUNDS=${2:-7}
EXE=$BUILD/bench/vs-mpi/vsmpi-ompi
cmake --build "$BUILD" --target vsmpi >/dev/null 2>&1 || true # never older than libstrata
[ -x "$EXE" ] || { echo "vs-mpi-tcp: $EXE not built (cmake --build $BUILD --target vsmpi)"; exit 77; }
TOKEN=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
for np in 2 4; do
    echo "# $(date -u +'%F %T') load $(cut -d' ' -f1-3 /proc/loadavg); $np ranks, TCP only"
    timeout 600 mpirun.openmpi --allow-run-as-root --oversubscribe -np $np \
        --mca btl tcp,self --mca pml ob1 --mca btl_tcp_if_include lo \
        -x STRATA_TRANSPORT=tcp -x STRATA_TOKEN="$TOKEN" -x STRATA_TIMEOUT=300 \
        "$EXE" -r "$ROUNDS" -s 8 64K 4M 64M
done
