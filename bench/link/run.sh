#!/usr/bin/env bash
# Link-layer benchmark: catalog load (+ derivation of every entry) and one derivation.
set -eu
build=${1:-build/release}
"$build/bench/link/bench_link" "$(dirname "$0")/../../data/links.json" 500
