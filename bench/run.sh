#!/usr/bin/env bash
# Run every benchmark script bench/*/run.sh against build dir $1.
set -eu
build=${1:-build/release}
for s in "$(dirname "$0")"/*/run.sh; do
  [ -f "$s" ] || continue
  echo "== $s"; bash "$s" "$build"
done
