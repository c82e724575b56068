#!/usr/bin/env bash
# strata topo with presets, cluster files, NCCL XML and local (topology I/O):
# exit codes, one-line errors with file:line:col, export round trips, and
# `strata topo local` on this host, without PCI data and without hwloc data.
set -u
SRC=${STRATA_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
# hwloc's I/O plugin keeps process-lifetime allocations (see the file).
export LSAN_OPTIONS="suppressions=$SRC/tests/lsan-hwloc.supp:fast_unwind_on_malloc=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
# shellcheck source=../cli_lib.sh
. "$(dirname "$0")/../cli_lib.sh" "$1"

# stdout must contain a fixed string
has() {
  if ! grep -qF -- "$1" "$tmp/out"; then echo "FAIL: output lacks '$1':"; cat "$tmp/out"; fail=1; fi
}

# ---- presets and names ----
for p in dgx-1v dgx-2 dgx-a100 dgx-h100 hgx-h200 gb200-nvl72 mi300x ascend-910b tpu-v4 \
         tpu-v5e pcie-8gpu cpu-cluster; do
  expect 0 "" topo show "$p"
done
expect 0 "" topo show dgx-h100:16,oversub=4,nics=4
has "endpoints  128"
# a third ratio has no tier to apply to: refused, never dropped (issue 11, cause 9)
expect 1 "3 ratios, but this fabric has 2 switch tiers" topo metrics dgx-h100:64,oversub=1:1:7
expect 1 "oversubscription 7 at tier 3, but a 3-tier tree" topo metrics fattree:k=8,bw=50,oversub=1:1:7
expect 1 "oversubscription 7 at tier 3, but a 2-tier tree" topo metrics railft:servers=64,gpus=8,oversub=1:1:7
# a ratio at tier 2 asks for the third tier: 49.68 / 7 = 7.098 GB/s per GPU at tier 3
expect 0 "" topo metrics railft:servers=64,gpus=8,oversub=1:7
has "tier 3          7.098"
expect 0 "" topo metrics dgx-h100:64,oversub=1:7
has "oversubscription 7:1"
expect 1 "unknown cluster 'dgx-h900' \(presets: ascend-910b, cpu-cluster, dgx-1v, dgx-2, dgx-a100" topo show dgx-h900
expect 1 "option servers=0" topo show dgx-h100:0
expect 1 "unknown cluster option 'speed'" topo show dgx-h100,speed=3
expect 1 "tpu-v4: at most 64 servers" topo show tpu-v4:65

# ---- cluster files: errors name file:line:col ----
cat >"$tmp/bad.json" <<'J'
{
  "server": {
    "devices": [{"name": "gpu", "kind": "gpu", "count": 2}],
    "links": [{"mesh": "gpu", "link": "nvlink9"}]
  }
}
J
expect 1 "bad.json:4:39: unknown link id \"nvlink9\"" topo show "$tmp/bad.json"
printf '{"server": {"devices": [{"name": "g", "kind": "gpu", "count": -1}]}}\n' >"$tmp/neg.json"
expect 1 "neg.json:1:63: \"count\" must be an integer from 1 to 4096, got -1" topo show "$tmp/neg.json"
printf '{"server": {"devices": [' >"$tmp/cut.json"
expect 1 "cut.json:1:" topo show "$tmp/cut.json"
expect 1 "nothere.json" topo show "$tmp/nothere.json"
# "memory": an HBM id of the catalog, on accelerators only
# (line 1: the value of "memory" opens at column 64)
printf '{"server": {"devices": [{"name": "g", "kind": "gpu", "memory": "hbm-h900"}]}}\n' >"$tmp/mem.json"
expect 1 "mem.json:1:64: unknown memory id \"hbm-h900\" \(expected an accelerator memory of data/links.json: hbm-a100-40," topo show "$tmp/mem.json"
printf '{"server": {"devices": [{"name": "g", "kind": "gpu", "memory": "ddr5-4800"}]}}\n' >"$tmp/ddr.json"
expect 1 "ddr.json:1:64: \"ddr5-4800\" is not an accelerator memory" topo show "$tmp/ddr.json"
printf '{"server": {"devices": [{"name": "n", "kind": "nic", "memory": "hbm-h100"}]}}\n' >"$tmp/nicmem.json"
expect 1 "nicmem.json:1:64: \"memory\" is recorded on accelerators only \(kind accel, gpu, npu or tpu\), not on kind \"nic\"" topo show "$tmp/nicmem.json"

# ---- export round trips: preset → file → same topology ----
expect 0 "" topo show dgx-h100:4,oversub=2 --export "$tmp/h100.json"
cp "$tmp/out" "$tmp/show1"
expect 0 "" topo show "$tmp/h100.json"
if ! cmp -s "$tmp/show1" "$tmp/out"; then echo "FAIL: exported dgx-h100:4 differs"; diff "$tmp/show1" "$tmp/out"; fail=1; fi
expect 0 "" topo metrics dgx-1v --export -
has '"name": "dgx-1v"'
# the accelerators' memory survives the round trip, and the model uses it
expect 0 "" topo show hgx-h200:2 --export "$tmp/h200x2.json"
grep -qF '"memory": "hbm-h200"' "$tmp/h200x2.json" || { echo "FAIL: export lost the memory"; fail=1; }
expect 0 "" topo describe "$tmp/h200x2.json"
has "H200 SXM 141GB [memory hbm-h200]"
# 4800 GB/s (links.md Memory ceiling, H200) / 3 passes = 1600 GB/s
expect 0 "" coll "$tmp/h200x2.json" --sizes 1G:1G
has "reduction 1600.0 GB/s (hbm-h200 bandwidth / 3, recorded in the cluster)"
# memory=ID on the command line: DGX A100 40GB, 1555 GB/s / 3 = 518.3 GB/s
expect 0 "" coll dgx-a100,memory=hbm-a100-40 --sizes 1G:1G
has "reduction 518.3 GB/s (hbm-a100-40 bandwidth / 3, recorded in the cluster)"
expect 1 "option memory=pcie5: expected an accelerator memory" coll dgx-a100,memory=pcie5

# ---- NCCL topology XML ----
expect 0 "" topo describe "$SRC/tests/data/nccl_h200.xml"
has "devices    30: accel 8 cpu 2 nic 8 pcie-switch 8 scaleup-switch 4"
has "[port roce-400g]"
expect 0 "" topo show "$SRC/tests/data/nccl_h200.xml" --export "$tmp/h200.json"
cp "$tmp/out" "$tmp/show1"
expect 0 "" topo show "$tmp/h200.json"
if ! cmp -s "$tmp/show1" "$tmp/out"; then echo "FAIL: exported XML import differs"; diff "$tmp/show1" "$tmp/out"; fail=1; fi
# joined by a network once the description says how many servers
expect 0 "" topo show "$SRC/tests/data/nccl_h200.xml,servers=4,net=rail-fat-tree"
has "endpoints  32"
sed 's/count="4"/count="four"/' "$SRC/tests/data/nccl_h200.xml" >"$tmp/typed.xml"
expect 1 "typed.xml:9:0: <nvlink> attribute 'count': expected an integer, got \"four\"" topo show "$tmp/typed.xml"
head -c 2000 "$SRC/tests/data/nccl_h200.xml" >"$tmp/trunc.xml"
expect 1 "trunc.xml:[0-9]+:[0-9]+: malformed XML" topo show "$tmp/trunc.xml"

# ---- local host ----
expect 0 "" topo local
has "cluster           local"
has "description       this host (hwloc)"
STRATA_HWLOC_SYNTHETIC="Package:1 Core:2 PU:1" expect 0 "no PCI devices" topo local
has "1 package(s), 2 core(s), 2 PU(s)"
STRATA_HWLOC_XML=/nonexistent/topo.xml expect 0 "hwloc could not read the topology" topo local
has "online (sysconf)"
expect 0 "" topo metrics local

exit $fail
