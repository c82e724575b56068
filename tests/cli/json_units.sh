#!/usr/bin/env bash
# Every command that prints results as JSON follows one convention
# (docs/formats.md "JSON output"): the document is one object whose first
# member is "schema_version": 1, and every number is in SI base units with
# its unit as the suffix of its key (_s, _B, _Bps, _bps, _W, _m, _flop,
# _flop_per_s) or of the key of an object or array holding it; numbers
# without a unit (counts, ratios, shares, ranks) carry one of the names
# listed below. A key outside both fails, so a new figure cannot slip in
# without its unit. Exception, said in the docs: strata bench's rows keep
# nccl-tests' own keys (size, time, alg_bw, bus_bw ...) so nccl-tests'
# readers read them.
. "$(dirname "$0")/../cli_lib.sh"
run() { # NAME ARGS...: strata ARGS > $tmp/NAME.json
  local n=$1; shift
  timeout "${CLI_TIMEOUT:-120}" "$S" "$@" >"$tmp/$n.json" 2>"$tmp/err" ||
    { echo "FAIL: strata $* -> $(cat "$tmp/err")"; fail=1; }
}
run link link ib-ndr --json
run links links --json
run coll coll dgx-h100:2 --sizes 1K:1M --json
run fabric fabric dgx-h100 --gpus 1024 --json
run path path pcie-8gpu-2s gpu0 gpu1 --json
run plan plan llama3-8b dgx-h100:4 --search --json
run sim sim dgx-h100:2 --json
run show topo show dgx-h100:2 --json
run metrics topo metrics dgx-h100:2 --json
run describe topo describe dgx-h100 --json
run wall wall llama3-8b dgx-h100 --gpus 8:64 --strategy dp --json
run report report dgx-a100:2 --json
run coherence coherence --json
run bench bench allreduce -b 8 -e 64 -P 2 --json
"$S" bench allreduce -b 8 -e 64 -P 2 -J "$tmp/benchJ.json" >/dev/null ||
  { echo "FAIL: bench -J"; fail=1; }
python3 - "$tmp"/*.json <<'PY' || fail=1
import json, re, sys
UNIT = re.compile(r'.*_(s|B|Bps|bps|W|m|flop|flop_per_s)$')
# numbers without a unit: counts, ratios and shares (fractions), indices
DIMLESS = set("""
schema_version gpus servers devices links endpoints count mult hops paths diameter diameter_hops
avg_hops tiers tier lanes links_per_device links_per_gpu per_server nics_per_server ranks
steps chunks eta eta_line eta_pkt eta_flow gbn_eta sr_eta gbn_window ber packet_error
efficiency utilisation bound_share latency_share bw_share ring_sim_share best_over_ring cliff
vs_alpha_beta oversubscription from_rank to_rank channel link phases phases_simulated phases_certified phases_generated phases_folded fold_flows fold_flows_run flows events
tp pp vpp dp cp ep zero mbs micro_batch micro_batches global_batch batch group calls mfu
exposed_share fabric_tiers wall evaluated radix switches transceivers channels req_slots rsp_slots
ratio cores cpus sockets node n spread ranks_fit ranks_over iters warmup_iters check root rows
wrong err median_abs max_abs within_20_percent copies read_lines write_lines
""".split())
DEVICE_KINDS = {"accel", "cpu", "nic", "pcie-switch", "scaleup-switch", "switch", "memory", "storage"}
NCCL_TESTS = {"size", "count", "time", "alg_bw", "bus_bw", "average_bus_bandwidth"}
bad = []
def walk(x, unit_above, where, file):
    if isinstance(x, dict):
        for k, v in x.items():
            ok_unit = unit_above or bool(UNIT.match(k))
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                if not (ok_unit or k in DIMLESS or k in DEVICE_KINDS or
                        (file.startswith("bench") and k in NCCL_TESTS)):
                    bad.append(f"{file}: {where}.{k} has no unit suffix and is not a count/ratio")
            walk(v, ok_unit, where + "." + k, file)
    elif isinstance(x, list):
        for v in x: walk(v, unit_above, where + "[]", file)
for f in sys.argv[1:]:
    name = f.rsplit("/", 1)[-1]
    try:
        d = json.load(open(f))
    except ValueError as e:
        bad.append(f"{name}: not JSON: {e}"); continue
    if not isinstance(d, dict) or list(d)[:1] != ["schema_version"] or d["schema_version"] != 1:
        bad.append(f"{name}: first member is not \"schema_version\": 1")
    walk(d, False, "", name)
seen = set()
for b in bad:
    if b not in seen: print("FAIL:", b); seen.add(b)
sys.exit(1 if bad else 0)
PY
exit $fail
