#!/usr/bin/env bash
# strata report: exit codes and one-line errors on stderr (bad cluster 1,
# bad flags and unknown sections 2); every preset and a range of builder
# specs report without a crash; --json is one valid JSON document with a
# key per section, for clusters with and without a network or scale-up.
set -u
CLI_TIMEOUT=120
CLI_ERROR_STDOUT_EMPTY=1
# shellcheck source=../cli_lib.sh
. "$(dirname "$0")/../cli_lib.sh" "$1"

# bad clusters: exit 1, one line
expect 1 "unknown cluster 'nope'" report nope:3
expect 1 "unknown cluster 'dgx-h900'" report dgx-h900
expect 1 "unknown cluster option 'speed'" report dgx-h100,speed=3
expect 1 "servers=0" report dgx-h100:0
expect 1 "ring: 2 accelerators" report ring:2
expect 1 "nonexistent.json: cannot open" report "$tmp/nonexistent.json"
printf '{"name": "x",\n' >"$tmp/bad.json"
expect 1 "bad.json:2:1: " report "$tmp/bad.json"
expect 1 "nonexistent-catalog.json" report --catalog "$tmp/nonexistent-catalog.json"
# bad flags and sections: exit 2, before anything is loaded
expect 2 "unknown option '--bogus'" report --bogus
expect 2 "unknown option '--bogus'" report dgx-a100 --bogus
expect 2 "unexpected argument 'b'" report a b
expect 2 "--section needs a value" report --section
expect 2 "--catalog needs a value" report dgx-a100 --catalog
expect 2 "unknown section 'foo'" report --section foo
expect 2 "unknown section 'foo'" report nope:3 --section foo
expect 0 "" report --help

# every preset, and builder specs without a network or without scale-up
for c in ascend-910b cpu-cluster dgx-1v dgx-2 dgx-a100 dgx-h100 gb200-nvl72 hgx-h200 mi300x \
         pcie-8gpu tpu-v4 tpu-v5e ring:3 mesh:2x2 full:4 switch:1 switch:2 torus:2x2x2,bw=10 \
         fattree:k=4,tiers=2 railft:servers=2,gpus=4 dgx-h100:8,oversub=4; do
  expect 0 "" report "$c"
  grep -q "^== Bottleneck" "$tmp/out" || { echo "FAIL: report $c has no bottleneck section"; fail=1; }
done
if [ -n "${STRATA_SOURCE_DIR:-}" ] && [ -f "$STRATA_SOURCE_DIR/tests/data/nccl_h200.xml" ]; then
  expect 0 "" report "$STRATA_SOURCE_DIR/tests/data/nccl_h200.xml"
fi
# a cluster file exported from a preset reports the same figures as the preset
"$S" topo show dgx-a100:2 --export "$tmp/a100.json" >/dev/null || { echo "FAIL: export"; fail=1; }
diff <("$S" report "$tmp/a100.json" | sed 1d | grep -v "a100.json") \
     <("$S" report dgx-a100:2 | sed 1d | grep -v "dgx-a100:2") >/dev/null ||
  { echo "FAIL: report of an exported cluster file differs from the preset's"; fail=1; }

# the default is dgx-h100:4, and `strata` alone runs it
"$S" >"$tmp/bare" && "$S" report dgx-h100:4 >"$tmp/explicit" && cmp -s "$tmp/bare" "$tmp/explicit" ||
  { echo "FAIL: 'strata' differs from 'strata report dgx-h100:4'"; fail=1; }

# --json: valid, one key per section. jansson (through strata's own JSON
# reader) must get past the syntax to the schema; jq checks the keys.
for c in dgx-a100:2 pcie-8gpu torus:4x4,bw=50 cpu-cluster; do
  "$S" report "$c" --json >"$tmp/r.json" || { echo "FAIL: report $c --json"; fail=1; continue; }
  "$S" links --catalog "$tmp/r.json" 2>"$tmp/jerr" >/dev/null
  grep -q 'unknown field "schema_version"' "$tmp/jerr" ||
    { echo "FAIL: report $c --json does not parse:"; cat "$tmp/jerr"; fail=1; }
  if command -v jq >/dev/null; then
    keys=$(jq -c 'keys' "$tmp/r.json")
    [ "$keys" = '["bottleneck","cluster","coll","links","schema_version","sim","strategy","topology"]' ] ||
      { echo "FAIL: report $c --json keys: $keys"; fail=1; }
  fi
done
if command -v jq >/dev/null; then
  "$S" report --json --section coll | jq -e '.coll.sizes | length == 8' >/dev/null ||
    { echo "FAIL: --json --section coll"; fail=1; }
  [ "$("$S" report --json --section links | jq -c 'keys')" = '["cluster","links","schema_version"]' ] ||
    { echo "FAIL: --json --section keeps only that section"; fail=1; }
fi
exit $fail
