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
expect 1 "p2p=off: accelerator 'gpu0' has no host memory in its server" topo show pcie-8gpu,p2p=off
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
exit $fail
