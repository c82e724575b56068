#!/usr/bin/env bash
# strata wall and strata fabric: bad input exits 2 with one line saying
# what and why (a range that does not fit the family, a compression ratio
# <= 0 or > 1, an unknown flag value).
set -u
CLI_TIMEOUT=60
# shellcheck source=../cli_lib.sh
. "$(dirname "$0")/../cli_lib.sh" "$1"

M=gpt-1.7b
expect 2 "missing MODEL" wall
expect 2 "missing FAMILY" wall $M
expect 2 "unknown model 'nope'" wall nope dgx-h100
expect 2 "GPU range 12:64 does not fit family 'dgx-h100' \\(8 GPUs per server" wall $M dgx-h100 --gpus 12:64
expect 2 "GPU range 8:68 does not fit" wall $M dgx-h100 --gpus 8:68
expect 2 "--gpus expects LO:HI" wall $M dgx-h100 --gpus 64:8
expect 2 "--gpus expects LO:HI" wall $M dgx-h100 --gpus x
expect 2 "--compress ratio must be in \\(0, 1\\], got 0" wall $M dgx-h100 --compress 0
expect 2 "--compress ratio must be in \\(0, 1\\], got 1.5" wall $M dgx-h100 --compress 1.5
expect 2 "--compress" wall $M dgx-h100 --compress -0.5
expect 2 "--precision expects fp32, bf16 or fp8, got 'fp16'" wall $M dgx-h100 --precision fp16
expect 2 "--strategy: unknown value 'zigzag'" wall $M dgx-h100 --strategy zigzag
expect 2 "--share must be in \\(0, 1\\)" wall $M dgx-h100 --share 1.5
expect 2 "--nic-x must be in" wall $M dgx-h100 --nic-x 0
expect 2 "unknown option '--bogus'" wall $M dgx-h100 --bogus 3
expect 2 "needs a value" wall $M dgx-h100 --gpus
expect 0 "" wall $M dgx-h100 --gpus 8:32 --strategy dp --compress 0.25 --json
expect 0 "" wall --help
expect 2 "missing CLUSTER" fabric
expect 2 "--switch: no switch 'x' in data/fabric.json" fabric dgx-h100 --gpus 64 --switch x
expect 2 "--gpus 12 does not fit cluster 'dgx-h100'" fabric dgx-h100 --gpus 12
expect 2 "is one server" fabric dgx-h100
# past k^3/4 the cluster itself cannot be built (topo's error, exit 1)
expect 1 "exceed what 64-port switches join in 3 tier" fabric dgx-h100 --gpus 131072
expect 0 "" fabric dgx-h100 --gpus 4096 --json
# --json parses; the what-if run follows its base run
"$S" wall $M dgx-h100 --gpus 8:32 --strategy dp --compress 0.25 --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert [r["run"] for r in d["runs"]] == ["base", "what-if"], d["runs"]
assert [p["gpus"] for p in d["runs"][0]["points"]] == [8, 16, 32]
' || { echo "FAIL: wall --json"; fail=1; }
"$S" fabric dgx-h100 --gpus 4096 --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["tiers"] == 3 and d["switches"] == 320, d
' || { echo "FAIL: fabric --json"; fail=1; }
exit $fail
