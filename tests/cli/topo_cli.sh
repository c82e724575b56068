#!/usr/bin/env bash
# strata topo: exit codes, one-line errors, JSON validity, DOT/SVG output.
set -u
# shellcheck source=../cli_lib.sh
. "$(dirname "$0")/../cli_lib.sh" "$1"

# usage errors: exit 2
expect 2 "missing action" topo
expect 2 "unknown option '--bogus'" topo show ring:8 --bogus
expect 2 "missing CLUSTER" topo metrics
# -o FILE (and --output FILE) take what stdout would show, for every action
expect 0 "" topo show ring:8 -o "$tmp/x"
[ ! -s "$tmp/out" ] && [ -s "$tmp/x" ] || { echo "FAIL: topo show -o wrote stdout"; fail=1; }
"$S" topo show ring:8 >"$tmp/y" && cmp -s "$tmp/x" "$tmp/y" || { echo "FAIL: topo show -o FILE differs from stdout"; fail=1; }
expect 0 "" topo metrics ring:8 --json --output "$tmp/m.json"
python3 -m json.tool "$tmp/m.json" >/dev/null || { echo "FAIL: topo metrics --json --output"; fail=1; }
expect 1 "cannot write '/nonexistent/x'" topo show ring:8 -o /nonexistent/x
expect 2 "unexpected argument" topo show ring:8 ring:9
# bad clusters: exit 1, one line naming the problem
expect 1 "ring: 2 accelerators" topo show ring:2
expect 1 "expected dimensions like 4x4x4, got '4xq'" topo metrics torus:4xq
expect 1 "unknown option 'zz'" topo metrics fattree:k=8,zz=1
expect 1 "radix k=9 must be even" topo metrics fattree:k=9
expect 1 "unknown link kind 'nvlink99'" topo show ring:8,link=nvlink99
expect 1 "100 endpoints \(1 to 8 for k=4, 2 tiers\)" topo show fattree:k=4,tiers=2,n=100
expect 1 "72 NICs exceed what 64-port switches join in 1 tier" topo show railft:servers=9,gpus=8,tiers=1
# good ones
expect 0 "" topo show torus:4x4x4
expect 0 "" topo metrics fattree:k=8,bw=50 --json
python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); assert m["bisection"]["bw_dir_Bps"]==3.2e12, m' "$tmp/out" \
  || { echo "FAIL: metrics --json"; fail=1; }
expect 0 "" topo show railft:servers=4,gpus=8 --json
python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); assert m["endpoints"]==32 and m["device_kinds"]["nic"]==32, m' "$tmp/out" \
  || { echo "FAIL: show --json"; fail=1; }
# DOT to stdout, and to a file (+ SVG when Graphviz is here)
expect 0 "" topo dot ring:4,bw=10
grep -q '"gpu0" -- "gpu1"' "$tmp/out" || { echo "FAIL: dot edges"; fail=1; }
expect 0 "wrote" topo dot fattree:k=4,bw=10 -o "$tmp/ft.dot"
[ -s "$tmp/ft.dot" ] || { echo "FAIL: no DOT file"; fail=1; }
if command -v dot >/dev/null; then
  grep -q "<svg" "$tmp/ft.svg" || { echo "FAIL: no SVG although Graphviz is installed"; fail=1; }
fi
expect 1 "cannot write" topo dot ring:4,bw=10 -o /nonexistent/dir/x.dot
exit $fail
