#!/usr/bin/env bash
# Published training throughputs against strata plan's prediction; prints
# a markdown table (docs/validation.md keeps the latest). Every row runs
# with the software settings of its era stated in docs/validation.md; no
# row has a constant of its own.
#   usage: validate.sh [path/to/strata]
set -eu
S=${1:-build/release/tools/strata/strata}
here=$(dirname "$0")
export STRATA_DATA_DIR=${STRATA_DATA_DIR:-$here/../../data}
# 2021 Megatron-LM / Megatron-DeepSpeed: fp16, full recompute, unfused
# attention, no SP, no distributed optimizer, gradient all-reduce after
# the backward pass, micro-batch 1
OLD="--no-flash --no-sp --recompute full --no-overlap-dp --zero 0 --mbs 1"
# Llama 3 (2024): BF16, flash attention, SP (the defaults of strata plan)
NEW="--mbs 1"
# name | model | cluster | TP | PP | batch | published TFLOP/s per GPU | era | source
rows=$(cat <<'ROWS'
SC21 T1 1.7B|gpt-1.7b|dgx-a100:4|1|1|512|137|OLD|Narayanan et al. SC21 Table 1 (validation.md B)
SC21 T1 3.6B|gpt-3.6b|dgx-a100:8|2|1|512|138|OLD|SC21 Table 1 (validation.md B)
SC21 T1 7.5B|gpt-7.5b|dgx-a100:16|4|1|512|142|OLD|SC21 Table 1 (validation.md B)
SC21 T1 18.4B|gpt-18.4b|dgx-a100:32|8|1|1024|135|OLD|SC21 Table 1 (validation.md B)
SC21 T1 39.1B|gpt-39.1b|dgx-a100:64|8|2|1536|138|OLD|SC21 Table 1 (validation.md B)
SC21 T1 76.1B|gpt-76.1b|dgx-a100:128|8|4|1792|140|OLD|SC21 Table 1 (recalled, M)
SC21 T1 145.6B|gpt-145.6b|dgx-a100:192|8|8|2304|148|OLD|SC21 Table 1 (recalled, M)
SC21 T1 310.1B|gpt-310.1b|dgx-a100:240|8|16|2160|155|OLD|SC21 Table 1 (recalled, M)
SC21 T1 529.6B|gpt-529.6b|dgx-a100:315|8|35|2520|163|OLD|SC21 Table 1 (recalled, M)
SC21 T1 1T|gpt-1t|dgx-a100:384|8|64|3072|163|OLD|SC21 Table 1 (recalled, M)
MT-NLG 2240|mt-nlg-530b|dgx-a100:280|8|35|1920|126|OLD|Smith et al. 2022 sec. 2.4: 60.1 s/iteration
MT-NLG 2800|mt-nlg-530b|dgx-a100:350|8|35|1920|121|OLD|Smith et al. 2022 sec. 2.4: 50.2 s/iteration
MT-NLG 3360|mt-nlg-530b|dgx-a100:420|8|35|1920|113|OLD|Smith et al. 2022 sec. 2.4: 44.4 s/iteration
Llama 3 405B 8K|llama3-405b|dgx-h100:1024|8|16|2048|430|NEW|Dubey et al. 2024 Table 4 (recalled, M)
Llama 3 405B 16K|llama3-405b|dgx-h100:2048|8|16|2048|400|NEW|Dubey et al. 2024 Table 4 (recalled, M)
ROWS
)
echo "| case | GPUs | TP | PP | DP | batch | published | predicted | error | step s | bottleneck |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
while IFS='|' read -r name model cluster tp pp batch pub era src; do
  flags=$OLD
  [ "$era" = NEW ] && flags=$NEW
  # a plan the memory model rejects still prints its step (exit 1): keep
  # the figure and say so in the row
  note=""
  out=$("$S" plan "$model" "$cluster" --tp "$tp" --pp "$pp" --batch "$batch" $flags --json \
        2>"${TMPDIR:-/tmp}/validate.err") || note=$(cat "${TMPDIR:-/tmp}/validate.err")
  if [ -z "$out" ]; then
    echo "| $name | | $tp | $pp | | $batch | $pub | not modelled: ${note//|/} | | | |"; continue
  fi
  python3 - "$name" "$pub" "${note#strata plan: }" <<PY "$out"
import json, sys
name, pub, note = sys.argv[1], float(sys.argv[2]), sys.argv[3]
d = json.loads(sys.argv[4])
c = d["config"]
# 2021 papers count executed FLOPs (the SC21 formula, recompute
# included); Llama 3 counts model FLOPs
p = (d["executed_per_gpu_flop_per_s"] if "SC21" in name or "MT-NLG" in name
     else d["per_gpu_flop_per_s"]) / 1e12
b = d["bottleneck"] + ("; " + note if note else "")
print("| %s | %d | %d | %d | %d | %d | %.0f | %.1f | %+.1f %% | %.2f | %s |" % (
    name, d["gpus"], c["tp"], c["pp"], c["dp"], c["global_batch"], pub, p,
    100 * (p / pub - 1), d["step_s"], b))
PY
done <<<"$rows"
