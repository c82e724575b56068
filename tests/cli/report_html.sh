#!/usr/bin/env bash
# strata report --html FILE: bad paths and flags give one-line errors (exit
# 1 for a file that cannot be written, 2 for flags); the page is one
# self-contained document (no scripts, nothing fetched) holding every chart
# the cluster has, each a <figure> with an <svg> that parses as XML and a
# table, and its numbers agree with the text report.
set -u
CLI_TIMEOUT=120
CLI_ERROR_STDOUT_EMPTY=1
# shellcheck source=../cli_lib.sh
. "$(dirname "$0")/../cli_lib.sh" "$1"

# bad flags: exit 2, before anything is computed
expect 2 "--html needs a value" report --html
expect 2 "--html needs a value" report dgx-a100 --html ""
expect 2 "--model needs a value" report --model
expect 2 "--html writes the whole report; drop --json" report --html "$tmp/x.html" --json
expect 2 "--html writes the whole report; drop --section" report --section links --html "$tmp/x.html"
# files that cannot be written: exit 1, one line naming the path and why
expect 1 "cannot write '$tmp/no/such/dir/r.html': No such file or directory" \
  report torus:4x4,bw=50 --html "$tmp/no/such/dir/r.html"
expect 1 "cannot write '$tmp': Is a directory" report torus:4x4,bw=50 --html "$tmp"
touch "$tmp/plain"
expect 1 "cannot write '$tmp/plain/r.html': Not a directory" \
  report torus:4x4,bw=50 --html "$tmp/plain/r.html"
if [ -w /dev/full ]; then # the write itself fails (no space): checked, not ignored
  expect 1 "writing '/dev/full' failed: No space left on device" report torus:4x4,bw=50 --html /dev/full
fi
expect 1 "unknown model 'nope'" report dgx-a100:2 --model nope --html "$tmp/x.html"
[ -e "$tmp/x.html" ] && { echo "FAIL: a failed report left $tmp/x.html"; fail=1; }

# a page per kind of cluster: servers on a network (with a model: the plan
# and the wall), a torus without network or accelerator memory (no plan),
# and one with over 96 devices (the summarised drawing)
expect 0 "" report dgx-a100:2 --model gpt-1.7b --html "$tmp/a100.html"
grep -Eq "^strata report: wrote $tmp/a100.html \([0-9]+ KiB\)$" "$tmp/out" ||
  { echo "FAIL: --html does not say what it wrote:"; cat "$tmp/out"; fail=1; }
"$S" report dgx-a100:2 --model gpt-1.7b >"$tmp/a100.txt" || { echo "FAIL: text report"; fail=1; }
expect 0 "" report torus:4x4,bw=50 --html "$tmp/torus.html"
expect 0 "" report dgx-h100:16 --html "$tmp/big.html"

python3 - "$tmp" <<'EOF' || fail=1
import re, sys, xml.etree.ElementTree as ET
tmp = sys.argv[1]
bad = []
nodata = set()

def page(name):
    s = open(f"{tmp}/{name}.html", encoding="utf-8").read()
    if not s.startswith("<!DOCTYPE html>"): bad.append(f"{name}: no doctype")
    for banned in ("<script", "<link", "<img", "@import", "url(", "src=", "href=\"http"):
        if banned in s: bad.append(f"{name}: contains {banned!r}")
    # every figure: an svg that is well-formed XML (escaping) and a table,
    # or says it has no data
    for fid, body in re.findall(r'<figure id="([^"]+)" class="strata-chart[^"]*">(.*?)</figure>', s, re.S):
        if '<p class="nodata">no data</p>' in body: nodata.add((name, fid)); continue
        svg = re.search(r"<svg .*?</svg>", body, re.S)
        if not svg: bad.append(f"{name}: figure {fid} has no svg"); continue
        try: ET.fromstring(svg.group(0))
        except ET.ParseError as e: bad.append(f"{name}: figure {fid}: svg is not XML: {e}")
        if '<table class="strata-data">' not in body: bad.append(f"{name}: figure {fid} has no table")
    return s

def ids(s):
    return set(re.findall(r'<figure id="([^"]+)"', s))

a = page("a100")
want = {"tier-bandwidth", "tier-latency", "tier-staircase", "busbw", "sim-links", "sim-tiers",
        "sim-time", "topology", "plan-step", "plan-memory", "wall-step", "wall-share", "wall-fabric"}
if ids(a) != want: bad.append(f"a100: figures {sorted(ids(a))}, want {sorted(want)}")
if any(n == "a100" for n, _ in nodata): bad.append(f"a100: figures without data: {nodata}")
# the busbw table's selected column at 1 GiB is the text report's best
# algorithm, 251.7 GB/s, at the table's three digits: 252 GB/s
text = open(f"{tmp}/a100.txt").read()
best = float(re.search(r"best algorithm \(model\)\s+([\d.]+) GB/s", text).group(1))
fig = re.search(r'<figure id="busbw".*?</figure>', a, re.S).group(0)
cell = re.search(r"<tr><td>1 GiB</td><td>([\d.]+) GB/s</td>", fig)
if not cell or float(cell.group(1)) != float(f"{best:.3g}"):
    bad.append(f"a100: busbw 1 GiB cell {cell and cell.group(1)}, text says {best}")
# dgx-a100: 16 GPUs, 2 servers: the drawing shows every device (under 96)
if "devices and links" not in a: bad.append("a100: drawing is not of every device")
# the text report itself is on the page, escaped
if "== Bottleneck: what bounds a large allreduce ==" not in a: bad.append("a100: no text report")

t = page("torus")
# no network, no servers: no scale-out tier; no memory recorded: no plan
if "scale-out" in re.search(r'<figure id="tier-bandwidth".*?</figure>', t, re.S).group(0):
    bad.append("torus: a scale-out tier drawn")
# the builder's links have no latency (bw= alone): no latency or staircase to draw
if nodata != {("torus", "tier-latency"), ("torus", "tier-staircase")}:
    bad.append(f"figures without data: {sorted(nodata)}")
if "no accelerator memory recorded" not in t: bad.append("torus: plan skip not said")
if {"plan-step", "wall-step"} & ids(t): bad.append("torus: plan or wall charts without a model")
b = page("big")
if "summarised (over 96 devices)" not in b: bad.append("big: drawing not summarised")
for m in bad: print("FAIL:", m)
sys.exit(1 if bad else 0)
EOF
exit $fail
