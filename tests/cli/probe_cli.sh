#!/usr/bin/env bash
# strata probe: the quick probe (the only one the default suite runs: its
# budget is 10 s on an idle host), the calibrated cluster file it saves and
# the commands that accept it, and one-line errors with exit 2 on bad input.
set -u
CLI_TIMEOUT=60
SRC=${STRATA_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
# `report local` loads the host's topology: hwloc's I/O plugin keeps
# process-lifetime allocations (see the file), which LeakSanitizer reports
# when a bad probe file ends the command early.
export LSAN_OPTIONS="suppressions=$SRC/tests/lsan-hwloc.supp:fast_unwind_on_malloc=0:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
# shellcheck source=../cli_lib.sh
. "$(dirname "$0")/../cli_lib.sh" "$1"

expect 2 "unknown option '--bogus'" probe --bogus
expect 2 "option '--save' needs a value" probe --save
expect 2 "--peer 'nohost': expected HOST:PORT" probe --peer nohost
expect 2 "--serve expects an integer >= 1 and <= 65535" probe --serve 70000
expect 0 "" probe --help
# a port checked where it is typed, not after the memory stage; --serve and
# --timeout each refuse the other mode's options; an unwritable --save
# fails before the probe's minute
expect 2 "--peer PORT expects an integer >= 1 and <= 65535 \(decimal\), got '0'" probe --peer localhost:0
expect 2 "--peer ':80': expected HOST:PORT" probe --peer :80
expect 2 "--timeout applies to --serve only" probe --quick --timeout 5
expect 2 "--serve takes only --timeout" probe --serve 9 --peer localhost:9
CLI_TIMEOUT=5 expect 1 "cannot write '$tmp/no/local.json': No such file or directory" probe --save "$tmp/no/local.json"
# --serve on a port no one uses: the kernel's pick (bind to port 0, freed
# just before). A fixed port (29733 before) failed with "Address already
# in use" when two runs of this test overlapped, or when another job's
# rendezvous port (20000 + HMAC(token) % 12768) was that one; a port taken
# between the pick and the serve is picked again (at most 5 times).
for try in 1 2 3 4 5; do
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("", 0)); print(s.getsockname()[1])')
  timeout 60 "$S" probe --serve "$port" --timeout 0.5 >"$tmp/out" 2>"$tmp/err"
  rc=$?
  grep -q "Address already in use" "$tmp/err" || break
done
[ $rc = 1 ] && grep -q "no peer connected within 0.5 s" "$tmp/err" && [ "$(wc -l <"$tmp/err")" = 1 ] ||
  { echo "FAIL: probe --serve $port --timeout 0.5 -> rc $rc:"; cat "$tmp/err"; fail=1; }

# the quick probe, saved, as JSON. Where the host is too busy for a figure
# the calibration needs (other jobs on the cores; ctest -j 2 runs this beside
# a test of ranks), the probe writes no file and says why in its last line,
# exit 1 ("never a file with a hole in a curve", calib.c): the load decides
# which, so both pass, and anything else fails. Tried up to 3 times; when
# every try was refused, the commands below read a quick probe's file saved
# on the development host (tests/data/probe-quick.json) instead — but only
# where the host was busy (1-minute load at least 0.5): three refusals on a
# quiet host are a probe that never saves, and fail. Seen: 1 of 2 runs
# refused ("flat hand-over at 256 B: in only 0 of 8 samples ...") beside 4
# busy loops, which failed the whole test.
saved=0
refused=0
for try in 1 2 3; do
  timeout "$CLI_TIMEOUT" "$S" probe --quick --json --save "$tmp/local.json" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  [ $rc = 0 ] && { saved=1; break; }
  [ $rc = 1 ] && [ ! -e "$tmp/local.json" ] &&
    tail -n 1 "$tmp/err" | grep -Eq "local.json: not written: .*; probe again on a less loaded host$" &&
    { refused=$((refused + 1)); continue; }
  echo "FAIL: strata probe --quick --json --save -> rc $rc:"; cat "$tmp/err"; fail=1; break
done
cp "$tmp/out" "$tmp/probe.json"
for key in '"memory"' '"coherence"' '"shm"' '"tcp"' '"system"' '"accelerators"'; do
  grep -q "$key" "$tmp/probe.json" || { echo "FAIL: probe --json lacks $key"; fail=1; }
done
if [ $saved = 1 ]; then
  grep -q '"measured"' "$tmp/local.json" || { echo "FAIL: saved file has no measured figures"; fail=1; }
elif [ $refused = 3 ]; then
  load=$(cut -d' ' -f1 /proc/loadavg)
  if awk -v l="$load" 'BEGIN { exit !(l < 0.5) }'; then
    echo "FAIL: the probe refused to save 3 times on a quiet host (load $load): $(tail -n 1 "$tmp/err")"
    fail=1
  else
    echo "note: the probe refused to save 3 times (a busy host, load $load: $(tail -n 1 "$tmp/err")); the commands below read tests/data/probe-quick.json"
  fi
  cp "$SRC/tests/data/probe-quick.json" "$tmp/local.json"
else
  cp "$SRC/tests/data/probe-quick.json" "$tmp/local.json" # a failure above: the rest still runs
fi

# every command takes the calibrated file
expect 0 "" topo show "$tmp/local.json" --export "$tmp/again.json"
cmp -s "$tmp/local.json" "$tmp/again.json" || { echo "FAIL: export is not a round trip"; diff "$tmp/local.json" "$tmp/again.json" | head; fail=1; }
# a spread of exactly 0 (all samples equal) survives the round trip too
sed 's/"bw_spread": [0-9.e+-]*/"bw_spread": 0.0/' "$tmp/local.json" >"$tmp/zero.json"
expect 0 "" topo show "$tmp/zero.json" --export "$tmp/zero2.json"
cmp -s "$tmp/zero.json" "$tmp/zero2.json" || { echo "FAIL: a zero spread is lost on export"; diff "$tmp/zero.json" "$tmp/zero2.json" | head; fail=1; }
expect 0 "" coll "$tmp/local.json" --sizes 8:1M
grep -q "scale-up shm" "$tmp/out" || { echo "FAIL: coll does not use the measured link"; cat "$tmp/out"; fail=1; }
expect 0 "" report "$tmp/local.json" --section bottleneck
expect 0 "" bench allreduce -P 2 -b 8 -e 64K -f 8 -w 1 -n 3 --model "$tmp/local.json"
grep -q "^# Model error (calibrated) vs median: " "$tmp/out" || { echo "FAIL: bench prints no error summary"; cat "$tmp/out"; fail=1; }
grep -q "calibrated by strata probe" "$tmp/out" || { echo "FAIL: bench header"; fail=1; }
# the wait regime is the model's input: the engine's policy by default
# (spin while the ranks fit the cores), another by --wait
grep -q "2 ranks on [0-9]* cores wait" "$tmp/out" || { echo "FAIL: bench names no wait regime"; cat "$tmp/out"; fail=1; }
grep -q "futex_switch_s" "$tmp/local.json" || { echo "FAIL: no futex switch in the saved file"; fail=1; }
expect 0 "" bench allreduce -P 2 -b 8 -e 8 -w 1 -n 3 --model "$tmp/local.json" --wait futex
grep -q "in the futex regime" "$tmp/out" || { echo "FAIL: --wait futex"; cat "$tmp/out"; fail=1; }
# STRATA_ALGO=recdbl asks for recursive doubling, which has no broadcast: the
# ring runs it (comm.c) and the model prices the ring, not 0 (before: every
# rank failed with an empty message)
STRATA_ALGO=recdbl expect 0 "" bench broadcast -P 2 -b 8 -e 1K -f 4 -w 1 -n 3
awk '$1 ~ /^[0-9]+$/ && $(NF-1) + 0 <= 0 { bad = 1 } END { exit bad }' "$tmp/out" ||
  { echo "FAIL: STRATA_ALGO=recdbl broadcast: a row without a model price"; cat "$tmp/out"; fail=1; }
expect 2 "unknown wait regime 'sleep'" bench allreduce -P 2 --model "$tmp/local.json" --wait sleep
expect 2 "--wait yield prices the calibrated model" bench allreduce -P 2 --wait yield
jq "del(.measured.futex_switch_s)" "$tmp/local.json" >"$tmp/old.json"
expect 2 "--wait futex: .*old.json has no futex switch" bench allreduce -P 2 --model "$tmp/old.json" --wait futex

# bad calibration files: exit 2, file:line:col
printf '{"measured": {"cores": 2,\n  "line_latency_s": -1e-7}}\n' >"$tmp/neg.json"
expect 2 "neg.json:2:21: \"line_latency_s\" must be > 0" bench allreduce -P 2 --model "$tmp/neg.json"
# (a cluster file without "measured" is a cluster for bench --model: tests/cli/netns_model.sh)
expect 2 "cannot open|No such file" bench allreduce -P 2 --model "$tmp/none.json"
sed 's/"bw_Bps": [0-9.e+-]*/"bw_Bps": -5/' "$tmp/local.json" >"$tmp/negbw.json"
expect 1 "negbw.json:[0-9]+:[0-9]+: \"bw_Bps\" must be > 0" coll "$tmp/negbw.json"
# bench --model reads the file's cluster too, as coll does (before, it
# took the negative link bandwidth)
expect 2 "--model: .*negbw.json:[0-9]+:[0-9]+: \"bw_Bps\" must be > 0" bench allreduce -P 2 --model "$tmp/negbw.json"
# beyond physical sense: a link over 100 TB/s, a one-way time over 5 s
sed 's/"bw_Bps": [0-9.e+-]*/"bw_Bps": 1e300/' "$tmp/local.json" >"$tmp/fastbw.json"
expect 1 "fastbw.json:[0-9]+:[0-9]+: \"bw_Bps\" must be > 0 and at most 1e14 B/s" coll "$tmp/fastbw.json"
sed 's/"alpha_s": [0-9.e+-]*/"alpha_s": 1e9/' "$tmp/local.json" >"$tmp/slow.json"
expect 1 "slow.json:[0-9]+:[0-9]+: \"alpha_s\" must be from 0 to 5 s" coll "$tmp/slow.json"
# report: a bad figure of the probe's fails the section with its place
# (before, the section was left out without a word and report exited 0)
jq '.measured.shm_alpha_s = "fast"' "$tmp/local.json" >"$tmp/str.json"
expect 1 "str.json:[0-9]+:[0-9]+: field \"shm_alpha_s\" must be a number, found a string" report "$tmp/str.json"
STRATA_PROBE="$tmp/str.json" expect 1 "field \"shm_alpha_s\" must be a number" report local
head -c 700 "$tmp/local.json" >"$tmp/cut.json"
expect 1 "cut.json:[0-9]+:[0-9]+: " report "$tmp/cut.json"
expect 2 "--model: .*cut.json:[0-9]+:[0-9]+: " bench allreduce -P 2 --model "$tmp/cut.json"
exit $fail
