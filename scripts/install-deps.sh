#!/usr/bin/env bash
# Install the Debian packages strata needs, only when one is missing.
# Idempotent and silent when everything is present; says what it cannot do.
set -euo pipefail

# Usage: install-deps.sh [--bench] [--list]
#   --bench  also what bench/ needs; --list  print the packages, install nothing.
# scripts/check-deps.sh checks that these cover every header, library and
# program the build, tests (and, with --bench, the benches) use.
bench=0 list=0
for a in "$@"; do
    case $a in
    --bench) bench=1 ;;
    --list) list=1 ;;
    *) echo "install-deps: unknown option '$a' (use --bench, --list)" >&2; exit 2 ;;
    esac
done

# The main job and the test suite need only these (clang: the clang build
# and the fuzz targets of .ci/run, libclang-rt-dev: its sanitizer and libFuzzer
# runtimes, which clang only recommends; jq and python3: the tests' JSON checks;
# nettle-dev: HMAC-SHA256 for the runtime's start-up handshake, its library libnettle8
# is already on every Debian; libhwloc-plugins: hwloc's libxml2 XML reader,
# which libhwloc15 only recommends — without it hwloc falls back to its own
# minimal parser and reads topology XML (STRATA_HWLOC_XML) differently;
# chromium: the browser test of `strata report --html`).
pkgs=(cmake ninja-build pkg-config gcc clang libclang-rt-dev make libjansson-dev libxml2-dev libhwloc-dev
      libhwloc-plugins libcmocka-dev graphviz iproute2 jq python3 nettle-dev chromium)
# --bench adds the baseline tools of bench/ (MPI compilers with their headers)
# and the load generator of bench/stress.
if [ $bench = 1 ]; then
    pkgs+=(openmpi-bin libopenmpi-dev mpich libmpich-dev stress-ng)
fi
if [ $list = 1 ]; then
    echo "${pkgs[*]}"
    exit 0
fi

missing=()
for p in "${pkgs[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$p")
    fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO=sudo; else
        echo "install-deps: missing packages (${missing[*]}) and not root; install them or rerun as root" >&2
        exit 1
    fi
else
    SUDO=
fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
if ! { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >/tmp/strata-install-deps.log 2>&1; then
    echo "install-deps: apt-get failed for ${missing[*]}; see /tmp/strata-install-deps.log" >&2
    exit 1
fi
