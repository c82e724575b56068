#!/usr/bin/env bash
# Paired strata-vs-MPI allreduce benchmark. $1 = build dir (default build/release).
# Runs the Open MPI and the MPICH build alternately, 2 then 4 ranks; each
# program alternates MPI_Allreduce and strata_comm_allreduce on the same
# buffers and prints medians and ratios (ratio = MPI time / strata time).
set -u
build=${1:-build/release}
dir=$build/bench/vs-mpi
rounds=${ROUNDS:-7}
for np in 2 4; do
  for flavour in ompi mpich; do
    exe=$dir/vsmpi-$flavour
    [ -x "$exe" ] || { echo "vs-mpi: $exe not built (no mpicc.$flavour?)"; continue; }
    echo "== $flavour, $np ranks"
    if [ $flavour = ompi ]; then
      timeout 300 mpirun.openmpi --allow-run-as-root --oversubscribe -np $np "$exe" -r "$rounds" "${@:2}"
    else
      timeout 300 mpirun.mpich -np $np "$exe" -r "$rounds" "${@:2}"
    fi
  done
done
