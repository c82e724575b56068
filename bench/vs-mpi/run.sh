#!/usr/bin/env bash
# Paired strata-vs-MPI allreduce benchmark. $1 = build dir (default build/release);
# further arguments go to vsmpi (e.g. -s 8 256K). Runs, 2 then 4 ranks, each
# MPI under two conditions, one after the other:
#   default  the MPI as installed (glibc unmaps its freed large buffers, so
#            each call first-touches its temporaries again);
#   best     memory kept (GLIBC_TUNABLES: no mmap'd chunks, no trimming) and
#            the best single-copy mechanism the host allows: Open MPI's vader
#            with xpmem where /dev/xpmem exists, else CMA; MPICH (ch4:ucx) with
#            UCX's shared-memory transports only (UCX_TLS=sm,self: posix/sysv
#            shm, CMA, and xpmem/knem where present).
# Each vsmpi alternates MPI_Allreduce and strata_comm_allreduce on the same
# buffers and prints medians and ratios (ratio = MPI time / strata time),
# its condition, and the host's core-to-core latency, first-touch rate and
# hand-off between two processes on one CPU.
# CONDITIONS="best" (or "default") runs one of them, FLAVOURS="ompi" (or
# "mpich") one MPI; ROUNDS sets -r; NPS="2" (or "4") one rank count.
# Each size prints two strata rows: "strata" (malloc'd buffers, the staged
# engine) and "strata (registered buffers)" (strata_comm_mem_alloc: no
# staging), both against the same MPI rounds. MPICH's ranks poll without yielding, so
# with 4 ranks on 2 loaded cores its runs can end at the 300 s timeout.
set -u
build=${1:-build/release}
dir=$build/bench/vs-mpi
rounds=${ROUNDS:-7}
conditions=${CONDITIONS:-default best}
flavours=${FLAVOURS:-ompi mpich}
keep=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=17179869184
single=cma
# vsmpi is a custom target the default build skips: rebuild it here so it is
# never older than libstrata (a stale one read the probe's result with an old
# layout and printed "first touch ... n=0")
cmake --build "$build" --target vsmpi >/dev/null 2>&1 || true
[ -e /dev/xpmem ] && single=xpmem
for np in ${NPS:-2 4}; do
  for flavour in $flavours; do
    exe=$dir/vsmpi-$flavour
    [ -x "$exe" ] || { echo "vs-mpi: $exe not built (no mpicc.$flavour?)"; continue; }
    for cond in $conditions; do
      echo "== $flavour, $np ranks, $cond (load $(cut -d' ' -f1-3 /proc/loadavg))"
      if [ $flavour = ompi ] && [ $cond = default ]; then
        VSMPI_CONDITION="Open MPI default" timeout 300 \
          mpirun.openmpi --allow-run-as-root --oversubscribe -x VSMPI_CONDITION \
          -np $np "$exe" -r "$rounds" "${@:2}"
      elif [ $flavour = ompi ]; then
        VSMPI_CONDITION="Open MPI best: memory kept, warmed, vader single copy $single" \
          GLIBC_TUNABLES=$keep timeout 300 \
          mpirun.openmpi --allow-run-as-root --oversubscribe -x VSMPI_CONDITION -x GLIBC_TUNABLES \
          --mca btl_vader_single_copy_mechanism $single -np $np "$exe" -r "$rounds" "${@:2}"
      elif [ $cond = default ]; then
        VSMPI_CONDITION="MPICH default" timeout 300 mpirun.mpich -np $np "$exe" -r "$rounds" "${@:2}"
      else
        VSMPI_CONDITION="MPICH best: memory kept, warmed, UCX shared memory only" \
          GLIBC_TUNABLES=$keep UCX_TLS=sm,self timeout 300 \
          mpirun.mpich -np $np "$exe" -r "$rounds" "${@:2}"
      fi
    done
  done
done
