#!/usr/bin/env bash
# strata plan: bad input exits 2 with one line saying what and why; a
# search with no feasible plan exits 1 saying what ran out and by how much.
set -u
CLI_TIMEOUT=30
# shellcheck source=../cli_lib.sh
. "$(dirname "$0")/../cli_lib.sh" "$1"

M=gpt-1.7b
expect 2 "missing MODEL" plan
expect 2 "missing CLUSTER" plan $M
expect 2 "unknown model 'nope'" plan nope dgx-a100
expect 2 "TP 5 does not divide the 24 attention heads" plan $M dgx-a100 --gpus 40 --tp 5
expect 2 "PP 5 x 1 chunks does not divide the 24 layers \\(nor the 26" plan $M dgx-a100 --gpus 40 --pp 5
expect 2 "= 3 does not divide the 8 GPUs" plan $M dgx-a100 --tp 3
expect 2 "batch 12 is not divisible by micro-batch 1 x DP 8" plan $M dgx-a100 --batch 12
expect 2 "batch 64 is not divisible by micro-batch 3 x DP 8" plan $M dgx-a100 --batch 64 --mbs 3
expect 2 "interleaving \\(2 chunks\\) needs PP > 1" plan $M dgx-a100 --vpp 2
expect 2 "needs the 2 micro-batches to be a multiple of PP 4" plan $M dgx-a100 --pp 4 --vpp 2 --batch 4
expect 2 "--gpus 12 does not match cluster 'dgx-a100'" plan $M dgx-a100 --gpus 12
expect 2 "--recompute expects none, selective or full" plan $M dgx-a100 --recompute some
expect 2 "--zero expects an integer >= 0 and <= 3 .decimal., got .4." plan $M dgx-a100 --zero 4
expect 2 "--tp needs a value" plan $M dgx-a100 --tp
expect 2 "--order expects tp, cp, \\(ep-\\)dp and pp once each" plan $M dgx-a100 --order tp-tp-dp
expect 2 "--order expects" plan $M dgx-a100 --order tp-xx
expect 2 "unknown option '--bogus'" plan $M dgx-a100 --bogus
expect 2 "records no accelerator memory" plan $M ring:8
expect 2 "no accelerator with id 'x100'" plan $M ring:8 --accel x100
expect 2 "EP 3 must divide the experts" plan mixtral-8x7b dgx-h100:2 --ep 3 --batch 48
expect 1 "unknown cluster" plan $M nope:3
expect 1 "no plan fits memory: the nearest" plan gpt-1t dgx-a100 --search
expect 1 "the plan does not fit: .* \\(misses by" plan gpt-18.4b dgx-a100 --tp 1 --batch 64
expect 0 "" plan gpt-1.7b dgx-a100,oversub=2 --gpus 16 --batch 64
expect 0 "" plan $M dgx-a100 --batch 64
expect 0 "" plan $M ring:8 --accel h100 --batch 64 --json
expect 0 "" plan --list
expect 0 "" plan mixtral-8x7b dgx-h100:4 --tp 2 --ep 8 --batch 64 --sim
expect 1 "limited to 1024 GPUs" plan gpt-1.7b dgx-a100:256 --sim --batch 2048
expect 0 "" plan --help
# a bad workload file points at the line and column
printf '{"name": "x", "source": "s", "layers": 2, "hidden": 64,\n "heads": 5, "ffn_hidden": 256, "vocab": 10, "seq": 8}\n' >"$tmp/bad.json"
expect 2 "bad.json:2:" plan "$tmp/bad.json" dgx-a100
# --json parses and carries every section
"$S" plan $M dgx-a100 --batch 64 --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
for k in ("step_s", "breakdown_s", "traffic", "memory_B", "bottleneck", "advice", "mfu"):
    assert k in d, k
' || { echo "FAIL: --json"; fail=1; }
exit $fail
