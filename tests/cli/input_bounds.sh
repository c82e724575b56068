#!/usr/bin/env bash
# Inputs without bounds (hardening issue, section 5): every numeric flag is
# decimal, finite, inside a stated range, and an overflow (ERANGE) is
# reported, in one line naming the flag and the value, exit 2. Files are
# capped and refused when not regular; cluster options and builder specs
# are checked against their documented limits before anything is built.
set -u
# shellcheck source=../cli_lib.sh
. "$(dirname "$0")/../cli_lib.sh" "$1"
export CLI_TIMEOUT=20 # a limit checked before allocating answers at once

C=switch:8
# ---- sizes: infinity, past the 2^50 B bound, hex, sign, spaces ----
expect 2 "--size expects a size .*0 to 1 PiB.*got '1e306T': out of range" sim $C --size 1e306T
expect 2 "--size expects a size .*got '1e25'" sim $C --size 1e25
expect 2 "--size expects a size .*got 'inf'" sim $C --size inf
expect 2 "--size expects a size .*got '0x10'" sim $C --size 0x10
expect 2 "--size expects a size .*got ' 8'" sim $C --size " 8"
expect 2 "--size expects a size .*got '-8'" sim $C --size -8
expect 0 "" coll $C --explain 1024T   # the bound itself: 2^50 B
expect 0 "" sim $C --size 64T         # 2^44 floats on 8 ranks: inside sched's 2^50 elements
expect 2 "-b expects a size .*0 to 4 GiB.*got '0x10'" bench allreduce -P 2 -b 0x10
expect 2 "-e expects a size .*got '8G'" bench allreduce -P 2 -e 8G
expect 2 "--sizes expects a size .*got '2000T'" coll $C --sizes 8:2000T
expect 2 "--explain expects a size .*got '1e400'" coll $C --explain 1e400
expect 2 "--also expects a size .*got '1e25'" sim $C --also allreduce:1e25
expect 2 "--buffer expects a size .*0 to 1 TiB" link ib-ndr --buffer 2T
expect 2 "--payload expects a size .*0 to 1 GiB" link pcie5 --payload 4G

# ---- integers: ERANGE, hex, ranges ----
expect 2 "-P expects an integer >= 1 and <= 64 .*got '99999999999999999999999': out of range" \
  bench allreduce -P 99999999999999999999999
expect 2 "--ranks expects an integer .*got '0x10'" bench allreduce --ranks 0x10
expect 2 "-n expects an integer >= 1 and <= 1000000 .*got '0'" bench allreduce -n 0
expect 2 "--chunks expects an integer >= 1 and <= 16384 .*got '100000000'" sim $C --chunks 100000000
expect 2 "--qps expects an integer >= 1 and <= 64 .*got '65'" sim $C --qps 65
expect 2 "--top expects an integer >= 0 and <= 1000 .*got '1001'" sim $C --top 1001
expect 2 "--seed expects an integer .*got '99999999999999999999': out of range" sim $C --seed 99999999999999999999
expect 2 "--group expects an integer .*got '1e3'" sim $C --group 1e3
expect 2 "--lanes expects an integer >= 1 and <= 1024 .*got '2048'" link pcie5 --lanes 2048
expect 2 "-n expects an integer >= 1 and <= 64 .*got '65'" run -n 65 true
expect 2 "--grace expects a number >= 0 and <= 3600 .*got 'nan'" run -n 1 --grace nan true
expect 2 "-f expects a number >= 1 and <= 1024 .*got '1e999': out of range" bench allreduce -P 2 -f 1e999
expect 2 "--length expects a number >= 0 and <= 100000 .*got '0x1p4'" link ib-ndr --length 0x1p4

# ---- files: capped, regular files only (exit 1, like any bad cluster) ----
ln -s /dev/zero "$tmp/x.json"
expect 1 "x.json: not a regular file" topo show "$tmp/x.json"
mkfifo "$tmp/f.xml"
expect 1 "f.xml: not a regular file" topo show "$tmp/f.xml"
truncate -s 65M "$tmp/big.json"
expect 1 "big.json: file larger than the 64 MiB input limit" topo show "$tmp/big.json"
expect 1 "/dev/zero: not a regular file" links --catalog /dev/zero
printf '{"server": {"devices": [{"name": "gpu", "kind": "gpu", "count": 4294967297}]}}' >"$tmp/c.json"
expect 1 "c.json:1:65: \"count\" must be an integer from 1 to 4096, got 4294967297" topo show "$tmp/c.json"

# ---- cluster sizes and options: refused before building ----
expect 1 "2400000 NICs on the network exceed what 64-port switches join in 3 tier.s. .65536" \
  topo show dgx-h100:300000
expect 1 "16777216 NICs exceed what 64-port switches join in 3 tier" \
  topo show railft:servers=1048576,gpus=16
expect 1 "option oversub=1e308: expected ratios from 1 to 1e6" topo show dgx-h100,oversub=1e308
expect 1 "option port=nvlink4: expected a network port id" topo show dgx-h100,port=nvlink4
expect 1 "option servers=99999999999999999999: expected an integer from 1 to 1048576" \
  topo show dgx-h100,servers=99999999999999999999

# builder specs: no silent int32 truncation (k=2^32+2 used to build k=2)
expect 1 "fattree:k=4294967298': expected a count from 0 to 1024, got '4294967298'" topo show fattree:k=4294967298
expect 1 "expected a count from 0 to 4096, got '4294967297'" topo show ring:4,mult=4294967297
expect 1 "expected a count from 0 to 16777216, got '0x10'" topo show ring:0x10

# ---- untrusted hwloc XML: a libhwloc crash is an error, not a crash ----
export STRATA_HWLOC_XML="$(dirname "$0")/../data/hwloc-crash.xml"
# (signal 11; under ASan, which stops the child at libhwloc's double free: exit status 1,
# or signal 6 where ASAN_OPTIONS has abort_on_error=1, as .ci/run sets)
expect 1 "hwloc (crashed|failed) reading .*hwloc-crash.xml \((signal (11|6)|exit status 1)\)" topo local
unset STRATA_HWLOC_XML

exit $fail
