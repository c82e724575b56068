#!/usr/bin/env bash
# The command's conventions: `strata help CMD`, the nearest command or
# option suggested, --json and -o/--output FILE on every command that prints
# results (JSON that parses, FILE = what stdout shows), nccl-tests' flags of
# `strata bench` with their meanings, and README's command table = the
# commands `strata help` lists.
set -u
# shellcheck source=../cli_lib.sh
. "$(dirname "$0")/../cli_lib.sh" "$1"
src=${STRATA_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}

# ---- help ----
expect 0 "" help bench
"$S" bench --help | cmp -s - "$tmp/out" || { echo "FAIL: strata help bench != strata bench --help"; fail=1; }
expect 0 "" help
"$S" --help | cmp -s - "$tmp/out" || { echo "FAIL: strata help != strata --help"; fail=1; }
expect 2 "unknown command 'nosuch' \(see 'strata help'\)" help nosuch
expect 2 "unknown command 'benhc' \(did you mean 'bench'" benhc        # a swap: distance 1
expect 2 "unknown command 'simm' \(did you mean 'sim'" simm
expect 2 "unknown command 'zzzzzz' \(see" zzzzzz                       # nothing near: no guess
expect 2 "unknown option '--explian' \(did you mean '--explain'" coll ring:8 --explian 1K
expect 2 "unknown option '--jsno' \(did you mean '--json'" links --jsno
expect 2 "unknown option '--minbyte' \(did you mean '--minbytes'" bench allreduce --minbyte 8
expect 2 "unknown option '--sectoin' \(did you mean '--section'" report --sectoin link
expect 2 "unknown option '-x' \(see" bench allreduce -x 1             # one letter: no guess
expect 2 "-o/--output given twice" links -o "$tmp/a" --output "$tmp/b"
expect 2 "--output needs a file name" links --output
"$S" help --commands >"$tmp/cmds"
[ "$(tr '\n' ' ' <"$tmp/cmds")" = "report links link topo path coherence coll sim plan run bench wall fabric probe " ] ||
  { echo "FAIL: help --commands: $(tr '\n' ' ' <"$tmp/cmds")"; fail=1; }
"$S" help --options link | grep -qx -- "--json" || { echo "FAIL: help --options link lacks --json"; fail=1; }

# README's command table names exactly these commands (each row's first
# word after `strata`, `[report` counted as report)
sed -n '/^## Commands/,/^## /p' "$src/README.md" | grep -o '^| `strata [^ `]*' |
  sed 's/^| `strata \[\?//' | sort >"$tmp/readme"
sort "$tmp/cmds" >"$tmp/have"
diff "$tmp/readme" "$tmp/have" >/dev/null ||
  { echo "FAIL: README's command table vs strata help --commands:"; diff "$tmp/readme" "$tmp/have"; fail=1; }

# ---- --json and -o FILE on every command that prints results ----
# (probe measures for seconds and is checked in probe_cli; run prints the
# program's output, not strata's)
M=gpt-1.7b
while read -r name args; do
  # shellcheck disable=SC2086
  expect 0 "" $args --json -o "$tmp/$name.json"
  [ -s "$tmp/out" ] && { echo "FAIL: $name --json -o FILE wrote to stdout"; fail=1; }
  python3 -m json.tool "$tmp/$name.json" >/dev/null 2>&1 || { echo "FAIL: $name --json is not JSON"; fail=1; }
  # shellcheck disable=SC2086
  "$S" $args >"$tmp/$name.txt" 2>/dev/null
  # shellcheck disable=SC2086
  expect 0 "" $args --output "$tmp/$name.o"
  cmp -s "$tmp/$name.txt" "$tmp/$name.o" || { echo "FAIL: $name --output FILE differs from stdout"; fail=1; }
done <<EOT
report report ring:8 --section links
links links --category PCIe
link link pcie5 --lanes 4
topo topo metrics ring:8
coll coll ring:8 --sizes 8:1K
sim sim ring:8 --size 1M
plan plan $M ring:8 --accel h100 --batch 64
wall wall $M dgx-h100 --gpus 8:16
fabric fabric dgx-h100 --gpus 64
EOT
expect 1 "cannot write '/nonexistent/f'" links -o /nonexistent/f
expect 2 "--json applies to show, metrics and describe" topo dot ring:4 --json
# link --json: the figures the text derives. pcie5 x16: 16 lanes x 32 GBd
# = 64 GB/s raw; 128b/130b line code -> 63.0 GB/s (links.md)
expect 0 "" link pcie5 --json
python3 - "$tmp/out" <<'PY' || { echo "FAIL: link pcie5 --json figures"; fail=1; }
import json, sys
j = json.load(open(sys.argv[1]))
assert j["id"] == "pcie5" and j["lanes"] == 16, j
assert abs(j["raw_dir_Bps"] - 64e9) < 1, j["raw_dir_Bps"]
assert abs(j["line_dir_Bps"] - 64e9 * 128 / 130) < 1e3, j["line_dir_Bps"]
assert [s["what"] for s in j["steps"]][:2] == ["signalling", "line code"], j["steps"]
assert j["datalink"]["length_m"] == 1 and j["datalink"]["ber"] == 1e-12, j["datalink"]
PY

# ---- device kinds: the words topo prints are the words a cluster file takes ----
# dgx-h100 exported (gpu, nvswitch ...), then with every kind word replaced
# by the one topo prints for it: the same devices line.
expect 0 "" topo show dgx-h100 --export "$tmp/v.json"
sed 's/"kind": "gpu"/"kind": "accel"/; s/"kind": "nvswitch"/"kind": "scaleup-switch"/' "$tmp/v.json" >"$tmp/p.json"
grep -q '"kind": "scaleup-switch"' "$tmp/p.json" && grep -q '"kind": "accel"' "$tmp/p.json" ||
  { echo "FAIL: dgx-h100's export has no gpu/nvswitch kind to replace"; fail=1; }
"$S" topo show "$tmp/v.json" | grep '^devices' >"$tmp/dv"
"$S" topo show "$tmp/p.json" | grep '^devices' >"$tmp/dp"
cmp -s "$tmp/dv" "$tmp/dp" || { echo "FAIL: printed kind words build another server"; cat "$tmp/dv" "$tmp/dp"; fail=1; }
for k in $(sed 's/^devices *[0-9]*://' "$tmp/dv" | tr ' ' '\n' | grep -v '^[0-9]*$'); do
  [ "$k" = switch ] && continue # network switches: built by "network", refused with a reason
  grep -q "\"kind\": \"$k\"" "$tmp/p.json" "$tmp/v.json" ||
    { echo "FAIL: printed kind '$k' is not a cluster-file kind word here"; fail=1; }
done
sed 's/"kind": "nvswitch"/"kind": "switch"/' "$tmp/v.json" >"$tmp/s.json"
expect 1 "device kind \"switch\" is a network switch" topo show "$tmp/s.json"

# ---- strata bench: nccl-tests' flags ----
sizes() { grep -v '^#' "$tmp/out" | awk '{printf "%s ", $1}'; }
field() { grep -v '^#' "$tmp/out" | awk -v c="$1" '{printf "%s ", $c}'; }
B="bench allreduce -P 2 -n 2 -w 0"
expect 0 "" $B -b 1K -e 4K -i 1K                   # -i alone: increments of 1 KiB
[ "$(sizes)" = "1024 2048 3072 4096 " ] || { echo "FAIL: -i 1K sizes: $(sizes)"; fail=1; }
grep -q "step: 1024(bytes)" "$tmp/out" || { echo "FAIL: header names the byte step"; fail=1; }
expect 0 "" $B -b 1K -e 16K -i 1K -f 4             # a factor > 1 wins, as in nccl-tests
[ "$(sizes)" = "1024 4096 16384 " ] || { echo "FAIL: -i with -f 4 sizes: $(sizes)"; fail=1; }
expect 0 "" bench allreduce --ranks=2 --minbytes=8 --maxbytes 64 --stepfactor=2 --iters 3 --warmup_iters=0 --check 2
[ "$(sizes)" = "8 16 32 64 " ] || { echo "FAIL: long options sizes: $(sizes)"; fail=1; }
grep -q "warmup iters: 0 iters: 3 validation: 2" "$tmp/out" || { echo "FAIL: -n/-w/-c in the header"; fail=1; }
[ "$(field 9)" = "0 0 0 0 " ] || { echo "FAIL: -c 2 #wrong: $(field 9)"; fail=1; }
expect 0 "" $B -b8 -e8 -d all                      # joined values; every type, nccl-tests' names
[ "$(field 3)" = "int8 uint8 int32 uint32 int64 uint64 half bfloat16 float double " ] ||
  { echo "FAIL: -d all types: $(field 3)"; fail=1; }
[ "$(field 2)" = "8 8 2 2 1 1 4 4 2 1 " ] || { echo "FAIL: -d all counts of 8 B: $(field 2)"; fail=1; }
expect 0 "" $B -b 64 -e 64 -o all
[ "$(field 4)" = "sum prod min max avg " ] || { echo "FAIL: -o all ops: $(field 4)"; fail=1; }
grep -q "Out of bounds values : 0 OK" "$tmp/out" || { echo "FAIL: -o all found wrong values"; fail=1; }
expect 0 "" $B -b 64 -e 64 -c 0
[ "$(field 9) $(field 13)" = "-1  -1 " ] || { echo "FAIL: -c 0 #wrong: $(field 9) $(field 13)"; fail=1; }
expect 0 "" bench broadcast -P 2 -n 2 -w 0 -b 64 -e 64 -r 1
[ "$(field 5)" = "1 " ] || { echo "FAIL: -r 1 root column: $(field 5)"; fail=1; }
expect 0 "" $B -b 1K -e 2K -J "$tmp/b.json"         # JSON to FILE, the table on stdout
[ "$(sizes)" = "1024 2048 " ] || { echo "FAIL: -J: table on stdout: $(sizes)"; fail=1; }
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); r=j["rows"]; assert [x["size"] for x in r]==[1024,2048] and r[0]["out_of_place"]["wrong"]==0 and j["iters"]==2, j' "$tmp/b.json" ||
  { echo "FAIL: -J FILE JSON"; fail=1; }
expect 0 "" $B -b 1K -e 1K --output "$tmp/b.txt"
[ -s "$tmp/out" ] && { echo "FAIL: bench --output wrote to stdout"; fail=1; }
grep -q "# Avg bus bandwidth" "$tmp/b.txt" || { echo "FAIL: bench --output FILE"; fail=1; }
expect 2 "give --json \(stdout\) or -J FILE, not both" $B --json -J "$tmp/x.json"
expect 2 "more than 1024 sizes" bench allreduce -b 8 -e 4G -i 8
expect 2 "-n expects an integer >= 1" bench allreduce -n 0
expect 2 "-r 2: root must be below -P 2" bench reduce -r 2
expect 2 "-J: cannot write '/nonexistent/j'" bench allreduce -J /nonexistent/j
expect 2 "unknown data type 'quad'" bench allreduce -d quad
expect 2 "--json takes no value" bench allreduce --json=1
# more ranks than CPUs: a warning, and the run goes on
cpus=$(getconf _NPROCESSORS_ONLN)
if [ "$cpus" -lt 64 ]; then
  expect 0 "warning: $((cpus + 1)) ranks on $cpus CPUs" bench allreduce -P $((cpus + 1)) -n 1 -w 0 -b 8 -e 8
else
  echo "skip: $cpus CPUs, more than bench's 64 ranks: no oversubscription to warn about"
fi
expect 0 "" bench allreduce -P 1 -n 1 -w 0 -b 8 -e 8
grep -q warning "$tmp/err" && { echo "FAIL: a warning for 1 rank"; fail=1; }
exit $fail
