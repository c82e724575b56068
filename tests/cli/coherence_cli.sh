#!/usr/bin/env bash
# strata coherence: the CXL flit table and memory tiers (values derived in
# src/link/coherence_test.c), one-line errors for a link that is not CXL
# or not a socket link and for bad flags; `local` measures and prints the
# model beside it (skipped figures on one core are stated, not faked).
set -u
CLI_TIMEOUT=120
# shellcheck source=../cli_lib.sh
. "$(dirname "$0")/../cli_lib.sh" "$1"

expect 1 "'pcie5' is not a CXL link \\(category PCIe\\)" coherence --link pcie5
expect 1 "'pcie5' is not a socket-to-socket link" coherence --socket pcie5
expect 1 "unknown CXL link 'cxl9'" coherence --link cxl9
expect 2 "--size must be a multiple of 64 B lines" coherence --size 100
expect 2 "--lanes" coherence --lanes 32
expect 2 "unknown option '--bogus'" coherence --bogus 1
expect 2 "unexpected argument 'remote'" coherence remote
expect 0 "" coherence --switches 3
# 64 B read on CXL 2.0 x16: 1 + 5 slots, 17 + 85 B, 75.3 %, 47.4 GB/s;
# behind 3 switches: 210 + 3 x 70 = 420 ns
grep -Eq "CXL.mem read \(MemRd -> MemData\) +68B +1 +5 +17 +85 +75.3% +47.4" "$tmp/out" ||
  { echo "FAIL: read row"; cat "$tmp/out"; fail=1; }
grep -Eq "CXL pool \(behind switches\) +420 ns" "$tmp/out" || { echo "FAIL: pool row"; fail=1; }
# Reads and writes at once (coherence_test.c test_mix): 2:1 on x8 is
# 192/187 x 31.51 = 32.35 GB/s (Micron CZ120's MLC 2:1 measured 36).
expect 0 "" coherence --lanes 8
grep -q "CXL.mem reads and writes at once, 2:1: 32.4 GB/s of data" "$tmp/out" ||
  { echo "FAIL: 2:1 mix"; cat "$tmp/out"; fail=1; }
expect 2 "--mix expects R:W" coherence --mix 2
expect 2 "--mix expects R:W" coherence --mix 0:0
expect 2 "--mix expects R:W" coherence --mix 1:x
# the same figures as JSON, in SI units: 64 B of data in 85 B of wire
# (5 slots x 17 B) = 0.752941; the pool's load 420 ns = 4.2e-07 s
expect 0 "" coherence --switches 3 --json
python3 - "$tmp/out" <<'PY' || { echo "FAIL: coherence --json"; cat "$tmp/out"; fail=1; }
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema_version"] == 1 and d["size_B"] == 64, d
m = d["messages"][0]
assert (m["req_slots"], m["rsp_slots"], m["rsp_B"]) == (1, 5, 85), m
assert abs(m["efficiency"] - 64 / 85) < 1e-6, m
pool = [t for t in d["tiers"] if t["tier"].startswith("CXL pool")][0]
assert abs(pool["load_s"] - 420e-9) < 1e-12, pool
PY
expect 0 "" coherence --link cxl3
grep -Eq "CXL.mem read .* 256B .* 75.0% +96.0" "$tmp/out" || { echo "FAIL: 256B row"; cat "$tmp/out"; fail=1; }
expect 0 "" coherence --socket none
if grep -q "remote socket" "$tmp/out"; then echo "FAIL: one socket has no remote tier"; fail=1; fi
expect 0 "" coherence local
grep -q "memory read bandwidth, all cores of node 0" "$tmp/out" || { echo "FAIL: local"; cat "$tmp/out"; fail=1; }
expect 0 "" coherence local --json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["schema_version"] == 1 and d["read_all_cores"]["measured_Bps"] > 0, d' "$tmp/out" ||
  { echo "FAIL: coherence local --json"; cat "$tmp/out"; fail=1; }
exit $fail
