#!/usr/bin/env bash
# strata links / link / report: exit codes and one-line errors on stderr.
# Bad catalogs must name file:line:column and exit 1; bad flags exit 2.
set -u
# shellcheck source=../cli_lib.sh
. "$(dirname "$0")/../cli_lib.sh" "$1"

good() {
  cat <<'J'
{"format": "strata-links", "version": 1, "links": [
  {"id": "x", "category": "PCIe", "name": "X", "confidence": "H", "source": "s",
   "signal": {"lanes": 4, "baud_gbd": 8, "modulation": "NRZ"},
   "line_code": "128b/130b", "links": 1, "duplex": "full",
   "packet": {"format": "none", "basis": "b"}}
]}
J
}
good >"$tmp/good.json"
expect 0 "" links --catalog "$tmp/good.json"

# malformed JSON (a missing comma on line 4)
good | sed '4s/"links": 1,/"links": 1/' >"$tmp/malformed.json"
expect 1 "malformed.json:4:[0-9]+: " links --catalog "$tmp/malformed.json"
# a missing field: the entry's brace is at 2:3
good | sed '2s/"source": "s",//' >"$tmp/missing.json"
expect 1 "missing.json:2:3: missing field \"source\"" links --catalog "$tmp/missing.json"
# a negative lane count, at its value
good | sed '3s/"lanes": 4/"lanes": -4/' >"$tmp/neg.json"
expect 1 "neg.json:3:24: field \"lanes\" must be a count" link x --catalog "$tmp/neg.json"
# an unknown line code
good | sed '4s|128b/130b|9b/11b|' >"$tmp/code.json"
expect 1 "code.json:4:17: unknown line code \"9b/11b\"" report --catalog "$tmp/code.json"
# empty and missing files
: >"$tmp/empty.json"
expect 1 "empty.json:1:[0-9]+: " links --catalog "$tmp/empty.json"
expect 1 "nope.json.*cannot open" links --catalog "$tmp/nope.json"

# names and flags
expect 1 "unknown link 'pcie8' \(close: .*pcie5" link pcie8
expect 2 "missing link NAME" link
expect 2 "--lanes expects an integer >= 1" link pcie5 --lanes 0
expect 2 "--lanes" link pcie5 --lanes -3
expect 2 "--ber expects a number >= 0 and <= 1 .decimal., got .2.: out of range" link pcie5 --ber 2
expect 2 "--ber is a bit-error rate" link pcie5 --ber 1
expect 2 "--ber expects a number" link pcie5 --ber abc
expect 2 "allows MTU 256..4096" link roce-100g --mtu 10
expect 2 "allows MTU 576..9216" link eth-100g --mtu 65536
expect 2 "no packet step" link hbm-h100 --payload 128
expect 2 "allows MTU 16..256" link nvlink4 --mtu 512
expect 2 "no lane facts" link hbm-h100 --lanes 2
expect 2 "--length" link ib-ndr --length -1
expect 2 "--buffer expects a size" link ib-ndr --buffer lots
expect 2 "needs a value" link pcie5 --mtu
expect 2 "unknown option '--frobnicate'" link pcie5 --frobnicate 1
expect 2 "not both" link pcie5 --mtu 256 --payload 256
expect 2 "unexpected argument" links extra
expect 2 "--category needs a value" links --category
expect 2 "--section needs a value" report --section
expect 2 "unknown section" report --section nope
expect 2 "unknown command" frobnicate

# help, version, the default job
for c in report links link; do expect 0 "" $c --help; grep -q "^usage: strata $c" "$tmp/out" || { echo "FAIL: $c --help"; fail=1; }; done
expect 0 "" --version
head -n 1 "$tmp/out" | grep -Eq '^strata [0-9]+\.[0-9]+\.[0-9]+$' || { echo "FAIL: --version"; fail=1; }
expect 0 "" 
grep -q "Physical and data-link layers" "$tmp/out" || { echo "FAIL: strata with no arguments lacks the link section"; fail=1; }

# the JSON lists every catalog entry, each with a source
expect 0 "" links --json
n_json=$(python3 -c 'import json,sys; print(sum(1 for l in json.load(open(sys.argv[1]))["links"] if l["source"]))' "$tmp/out")
n_cat=$(grep -c '^      "id":' "${STRATA_DATA_DIR:-$(dirname "$0")/../../data}/links.json")
[ "$n_json" = "$n_cat" ] && [ "$n_cat" -gt 60 ] || { echo "FAIL: links --json has $n_json sourced rows, catalog $n_cat"; fail=1; }

# every entry derives and prints (under ASan in the asan-ubsan build)
for id in $(python3 -c 'import json,sys; print(" ".join(l["id"] for l in json.load(open(sys.argv[1]))["links"]))' "$tmp/out"); do
  "$S" link "$id" >/dev/null 2>"$tmp/err" || { echo "FAIL: strata link $id"; cat "$tmp/err"; fail=1; }
done

[ $fail = 0 ] && echo "links_errors ok"
exit $fail
