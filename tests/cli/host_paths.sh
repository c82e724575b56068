#!/usr/bin/env bash
# Host data paths (issue 15): p2p=off routes GPU pairs of a server through
# host memory, the collective model and the simulator price the same ring
# alike, and bad input (an unknown p2p value, a socket link on a
# single-socket server, P2P off without host memory) is one clear line.
set -u
CLI_TIMEOUT=60
# shellcheck source=../cli_lib.sh
. "$(dirname "$0")/../cli_lib.sh" "$1"

expect 1 "option p2p=maybe: expected on or off" topo show pcie-8gpu-2s,p2p=maybe
cat >"$tmp/nomem.json" <<'JSON'
{"name": "no-dram", "p2p": "off", "server": {"devices": [
  {"name": "cpu", "kind": "cpu"}, {"name": "gpu", "kind": "gpu", "count": 2}],
 "links": [{"from": "gpu", "to": "cpu", "link": "pcie4"}]}}
JSON
expect 1 "p2p=off: accelerator 'gpu0' has no host memory in its server" topo show "$tmp/nomem.json"
expect 1 "p2p=off applies to servers .* not to a torus" topo show tpu-v4,p2p=off
cat >"$tmp/one.json" <<'JSON'
{"name": "one-socket", "server": {"devices": [
  {"name": "cpu", "kind": "cpu"}, {"name": "gpu", "kind": "gpu", "count": 2}],
 "links": [{"from": "gpu", "to": "cpu", "link": "pcie4"},
           {"from": "cpu", "to": "cpu", "link": "upi2"}]}}
JSON
expect 1 "one.json:4:49: \"upi2\" is a socket-to-socket link, but this server has 1 CPU socket" topo show "$tmp/one.json"
sed 's/"name": "one-socket"/"name": "x", "p2p": "of"/; s/"link": "upi2"/"link": "pcie4"/' "$tmp/one.json" >"$tmp/p2p.json"
expect 1 "p2p.json:1:22: unknown \"p2p\" value \"of\" \\(expected on or off\\)" topo show "$tmp/p2p.json"
cat >"$tmp/sock.json" <<'JSON'
{"name": "two", "server": {"devices": [
  {"name": "cpu", "kind": "cpu", "count": 2}, {"name": "gpu", "kind": "gpu", "count": 2}],
 "links": [{"from": "gpu", "to": "cpu", "map": "block", "link": "pcie4"},
           {"from": "gpu", "to": "cpu[0]", "link": "upi2"}]}}
JSON
expect 1 "\"upi2\" is a socket-to-socket link: it joins cpu devices, not \"gpu\" and \"cpu\"" topo show "$tmp/sock.json"
cat >"$tmp/cxl.json" <<'JSON'
{"name": "cxl", "server": {"devices": [
  {"name": "cpu", "kind": "cpu"}, {"name": "cxlmem", "kind": "cxl-memory"},
  {"name": "gpu", "kind": "gpu"}],
 "links": [{"from": "gpu", "to": "cpu", "link": "pcie5"},
           {"from": "cxlmem", "to": "cpu", "link": "pcie5"}]}}
JSON
expect 1 "cxl.json:5:52: \"pcie5\" joins CXL memory \"cxlmem\" but is not a CXL-capable link \(category PCIe" topo show "$tmp/cxl.json"

# The staged path, hop by hop, and the export keeps p2p off.
expect 0 "" topo show pcie-8gpu-2s,p2p=off
grep -q "gpu0 > pcisw0 > cpu0 > dram0 > cpu0 > pcisw0 > gpu1" "$tmp/out" ||
  { echo "FAIL: P2P-off route not through dram0"; cat "$tmp/out"; fail=1; }
expect 0 "" topo show pcie-8gpu-2s,p2p=off --export "$tmp/off.json"
grep -q '"p2p": "off"' "$tmp/off.json" || { echo "FAIL: export lost p2p"; fail=1; }
expect 0 "" topo show "$tmp/off.json"
grep -q "cpu0 > dram0 > cpu0" "$tmp/out" || { echo "FAIL: exported file not P2P off"; fail=1; }

# Model and simulator agree on the P2P-off ring (1 GiB, 8 GPUs): both
# 2 x 7/8 x 2^30 B / (28.01/2 GB/s) = 134 ms (cost_test derives it).
"$S" sim pcie-8gpu-2s,p2p=off --op allreduce --size 1G --algo ring --json >"$tmp/sim.json" || fail=1
python3 - "$tmp/sim.json" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
t, m = d["time_s"], d["time_model_s"]
assert abs(t / m - 1) < 0.02, (t, m)
assert abs(t - 2 * 7 / 8 * 2**30 / (28.01e9 / 2)) / t < 0.01, t
PY
# The other schedules on the same P2P-off box agree too (within 2 %).
for a in rabenseifner recdbl tree; do
  "$S" sim pcie-8gpu-2s,p2p=off --op allreduce --size 1G --algo $a --json >"$tmp/sim.json" || fail=1
  python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); t, m = d["time_s"], d["time_model_s"]; assert abs(t / m - 1) < 0.02, (sys.argv[2], t, m)' "$tmp/sim.json" $a || fail=1
done

# P2P on (the validation box, docs/validation.md H3): the GPUs write into
# their peers with SM stores, 128 B TLPs, 0.9 of the links' 256 B-MPS rate
# in the model and the simulator alike: 56.01 x 0.9 = 50.41 GB/s, a 1 GiB
# ring 2 x 7/8 x 2^30 B / 50.41 GB/s = 37.3 ms.
"$S" sim "$(dirname "$0")/../data/wrx90_2switch.json" --op allreduce --size 1G --algo ring --json \
  >"$tmp/sim.json" || fail=1
python3 - "$tmp/sim.json" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
t, m = d["time_s"], d["time_model_s"]
assert abs(t / m - 1) < 0.02, (t, m)
assert abs(t - 2 * 7 / 8 * 2**30 / (56.01e9 * 0.9)) / t < 0.01, t
PY

# strata path: bad flags exit 2, unknown devices and impossible paths 1.
expect 2 "--mode expects auto, direct, staged, pinned or pageable, got 'dma'" path pcie-8gpu-2s gpu0 gpu1 --mode dma
expect 2 "missing B" path pcie-8gpu-2s gpu0
expect 2 "unknown option '--bogus'" path pcie-8gpu-2s gpu0 gpu1 --bogus
expect 2 "--cpu-copy" path pcie-8gpu-2s dram0 gpu0 --cpu-copy 0
expect 1 "no device 'gpu9' in cluster 'pcie-8gpu-2s'" path pcie-8gpu-2s gpu0 gpu9
expect 1 "mode pinned does not apply from accel 'gpu0' to accel 'gpu1'" path pcie-8gpu-2s gpu0 gpu1 --mode pinned
expect 1 "GPU peer-to-peer is off on this cluster" path pcie-8gpu-2s,p2p=off gpu0 gpu1 --mode direct
expect 1 "crosses the socket link" path pcie-8gpu-2s nic2 gpu0
expect 1 "not in one server" path pcie-8gpu-2s:2 s0.gpu0 s1.gpu0

# Pageable against pinned, 1 GiB dram0 -> gpu0 (hostpath_test.c derives
# it): pinned one DMA at 28.01 GB/s + 1.1 us; pageable adds the CPU copy
# at 8 x 38.4 / 2 = 153.6 GB/s (+0.2 us): 2 copies, 45.3 ms vs 38.3 ms.
# GPUDirect Storage: 1 copy at the drive's 7.0 GB/s; through the page
# cache 3 copies.
for m in pinned pageable; do
  "$S" path pcie-8gpu-2s dram0 gpu0 --mode $m --json >"$tmp/$m.json" || fail=1
done
"$S" path pcie-8gpu-2s nvme0 gpu1 --json >"$tmp/gds.json" || fail=1
"$S" path pcie-8gpu-2s nvme0 gpu1 --mode staged --json >"$tmp/bounce.json" || fail=1
python3 - "$tmp" <<'PY' || fail=1
import json, sys
d = {k: json.load(open(f"{sys.argv[1]}/{k}.json")) for k in ("pinned", "pageable", "gds", "bounce")}
n, pcie, mem = 2**30, 28.01e9, 153.6e9
p, g = d["pinned"], d["pageable"]
assert p["copies"] == 1 and g["copies"] == 2, (p["copies"], g["copies"])
assert abs(p["time_s"] - (1.1e-6 + n / pcie)) / p["time_s"] < 1e-3, p["time_s"]
assert g["stages"][0]["mover"] == "CPU (memcpy)", g["stages"][0]
assert abs(g["time_s"] - (0.2e-6 + n / mem + p["time_s"])) / g["time_s"] < 1e-3, g["time_s"]
assert [h["layer"] for h in p["stages"][0]["hops"]] == ["Memory", "PCIe", "PCIe"]
assert d["gds"]["copies"] == 1 and d["bounce"]["copies"] == 3
assert abs(d["gds"]["bw_Bps"] / (pcie / 4) - 1) < 0.01, d["gds"]["bw_Bps"]
PY

# strata plan --offload: bad value exit 2; a cluster without host memory.
expect 2 "--offload expects none, host or cxl, got 'disk'" plan gpt-1.7b dgx-h100 --offload disk
expect 2 "offload=cxl: 'gpu0' has no CXL memory in its server" plan gpt-1.7b dgx-h100 --offload cxl
expect 0 "" plan gpt-1.7b pcie-8gpu-2s --accel a100-80 --offload cxl
grep -q "offload to CXL memory" "$tmp/out" || { echo "FAIL: plan offload line"; fail=1; }
# Tier capacity: ZeRO-0 keeps 12 B x 7.457e9 = 89.49 GB of gpt-7.5b's states
# per GPU in the tier; the 256 GB CXL expander serves 8 GPUs: 32 GB each.
expect 1 "89.49 GB of optimizer states per GPU in the offload tier, whose capacity gives each GPU 32.00 GB \\(misses by 57.49 GB\\)" \
  plan gpt-7.5b pcie-8gpu-2s --accel a100-80 --zero 0 --offload cxl
expect 0 "" plan gpt-7.5b pcie-8gpu-2s --accel a100-80 --zero 0 --offload host
grep -q "89.49 GB per GPU of 128 GB per GPU's share of the tier$" "$tmp/out" ||
  { echo "FAIL: host tier share"; cat "$tmp/out"; fail=1; }
exit $fail
