#!/usr/bin/env bash
# strata coll: exit codes and one-line errors on stderr. Bad flags exit 2,
# a cluster or algorithm that does not fit exits 1; nothing crashes.
set -u
CLI_TIMEOUT=20
# shellcheck source=../cli_lib.sh
. "$(dirname "$0")/../cli_lib.sh" "$1"

C=railft:servers=2,gpus=8
expect 2 "missing CLUSTER" coll
expect 2 "unknown collective 'foo'" coll $C --op foo
expect 2 "unknown algorithm 'fast'" coll $C --algo fast
expect 2 "--sizes expects LO:HI" coll $C --sizes 8
expect 2 "--sizes needs 1 <= LO <= HI" coll $C --sizes 8:4
expect 2 "expects a size" coll $C --sizes 8:lots
expect 2 "expects a size" coll $C --explain -3
expect 2 "--op needs a value" coll $C --op
expect 2 "unknown option '--bogus'" coll $C --bogus
expect 2 "unexpected argument 'x'" coll $C x
expect 1 "unknown cluster" coll nope:3
expect 1 "ring does not implement alltoall" coll $C --op alltoall --algo ring
expect 1 "hier needs several servers" coll ring:8 --algo hier
expect 1 "innet needs switches that reduce" coll torus:4x4 --algo innet
expect 1 "innet across servers needs network switches that reduce" coll $C --algo innet
expect 1 "nvlstree needs several servers whose switches reduce" coll dgx-h100 --algo nvlstree
expect 0 "" coll $C --algo nvls-tree --sizes 1M:2M
expect 0 "" coll $C --sizes 1:1
expect 0 "" coll $C --op barrier --json
expect 0 "" coll $C --help
grep -q "where the time goes" <("$S" coll $C --explain 1M) || { echo "FAIL: --explain"; fail=1; }
# --explain names every algorithm that implements the collective: priced, or why not
"$S" coll dgx-h100 --explain 1G >"$tmp/x"
for a in ring tree binomial recdbl rabenseifner torus2d innet; do
  grep -Eq "^  $a +\*? +[0-9.e+]+ " "$tmp/x" || { echo "FAIL: --explain lacks $a"; fail=1; }
done
grep -q "^  hier          not applicable" "$tmp/x" || { echo "FAIL: --explain hier"; fail=1; }
grep -q "^  nvlstree      not applicable" "$tmp/x" || { echo "FAIL: --explain nvlstree"; fail=1; }
"$S" coll dgx-h100:2 --explain 1G >"$tmp/e"
grep -q "double binary tree over 2 servers (NCCL's balanced tree), a chain of 8" "$tmp/e" ||
  { echo "FAIL: --explain tree form"; fail=1; }
# one line per channel with its rail (issue 11): 8 ring channels, 2 x 8 tree
# channels; DGX H100 pairs GPUs with their NICs behind PCIe switches
[ "$(grep -c '^    channel [0-7]: rail [0-7] (NIC s0.nic[0-7]); in at rank' "$tmp/e")" = 8 ] ||
  { echo "FAIL: --explain ring channel rails"; fail=1; }
[ "$(grep -c '^    tree [01] channel [0-7]: rail [0-7] .* through the PCIe switch they share$' "$tmp/e")" = 16 ] ||
  { echo "FAIL: --explain tree channel rails"; fail=1; }
grep -q '^    channel 3: rail 3 (NIC s0.nic3); in at rank 3, out from rank 2, through the PCIe switch they share$' "$tmp/e" ||
  { echo "FAIL: --explain ring channel 3"; fail=1; }
expect 2 "--select expects strata or nccl, got 'mpi'" coll dgx-h100 --select mpi
expect 2 "--select needs a value" coll dgx-h100 --select
# NCCL on one H100 board at 1 GiB: NVLS (in-switch reduction), priced as innet
grep -q "^NCCL would run NVLS/Simple" <("$S" coll dgx-h100 --select nccl --explain 1G) ||
  { echo "FAIL: --select nccl explain"; fail=1; }
# --nccl-version: the release's tuning model chooses (docs/collectives.md).
# 4 x 8 H100 at 8 GiB: 2.19.3 (and every release before 2.28) runs the
# ring there, the newest model NVLSTree
expect 2 "--nccl-version needs --select nccl" coll dgx-h100:4 --nccl-version 2.19.3
expect 2 "NCCL version '2.18.5': tuning models are transcribed from 2.19 on" coll dgx-h100:4 --select nccl --nccl-version 2.18.5
expect 2 "NCCL version '2.x': expected MAJOR.MINOR" coll dgx-h100:4 --select nccl --nccl-version 2.x
expect 2 "--nccl-version needs a value" coll dgx-h100:4 --select nccl --nccl-version
expect 1 "NCCL 2.24.3 does not support Blackwell" coll gb200-nvl72 --select nccl --nccl-version 2.24.3 --sizes 1G:1G
grep -q "^NCCL 2.19.3 (tuning model of 2.19-2.20) would run Ring/Simple" <("$S" coll dgx-h100:4 --select nccl --nccl-version 2.19.3 --explain 8G) ||
  { echo "FAIL: --nccl-version 2.19.3"; fail=1; }
grep -q "^NCCL would run NVLSTree/Simple" <("$S" coll dgx-h100:4 --select nccl --explain 8G) ||
  { echo "FAIL: newest model on 4 x 8 H100"; fail=1; }
grep -q '"tuning_model": "2.23-2.24"' <("$S" coll dgx-h100:4 --select nccl --nccl-version 2.24.3 --explain 8G --json) ||
  { echo "FAIL: --nccl-version --json"; fail=1; }
# strata's best on 8 A100 at 1 GiB is torus2d, which no library ships (rabenseifner,
# MPI's on CPUs, pays its first copy of 1 GiB at half the HBM's rate); NCCL runs its ring
"$S" coll dgx-a100 --select nccl --explain 1G >"$tmp/x"
grep -q "torus2d: no shipping library implements it (strata's own schedule)" "$tmp/x" ||
  { echo "FAIL: library label"; fail=1; }
grep -q "^NCCL would run Ring/Simple" "$tmp/x" || { echo "FAIL: NCCL ring on A100"; fail=1; }
# registered buffers: only the direct allreduce; there it saves the staging
# read (64 MiB on ring:4: fewer microseconds than staged, one chunk)
expect 2 "--registered needs --algo direct and --op allreduce" coll ring:4 --registered
expect 2 "--registered needs --algo direct and --op allreduce" coll ring:4 --algo direct --op allgather --registered
st=$("$S" coll ring:4 --algo direct --sizes 64M:64M --json | grep -o '"time_s": [0-9.e+-]*' | head -1 | cut -d' ' -f2)
rg=$("$S" coll ring:4 --algo direct --sizes 64M:64M --json --registered | grep -o '"time_s": [0-9.e+-]*' | head -1 | cut -d' ' -f2)
# bench/README.md quotes these two (5473 -> 5050 us)
awk -v a="$st" -v b="$rg" 'BEGIN { exit !(a > 0 && b > 0 && b < a && int(a * 1e6 + 0.5) == 5473 && int(b * 1e6 + 0.5) == 5050) }' ||
  { echo "FAIL: --registered 64M: $rg s not below staged $st s"; fail=1; }
exit $fail
