#!/usr/bin/env bash
# Runs every cargo-fuzz target briefly from its committed seeds (fuzz/seeds/<target>/).
# The machine has one (stable) toolchain; RUSTC_BOOTSTRAP=1 lets cargo-fuzz pass its
# instrumentation flags to it.
#
# In CI (the default): an unoptimised build without a sanitizer, each target fuzzed for
# FUZZ_SECONDS (default 10). The crate has no unsafe code (`#![forbid(unsafe_code)]`), so what
# a run here can find is a panic, an abort or a hang, which this build finds as well, without
# the optimised AddressSanitizer build's time (BENCHMARKS.md, "Fuzzing", has a run's inputs
# per target).
# FUZZ_ASAN=1: that optimised AddressSanitizer build; FUZZ_RUNS=N: N inputs per target instead
# of a time (`FUZZ_ASAN=1 FUZZ_RUNS=20000 bash .ci/fuzz.sh`: the deeper run).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v cargo-fuzz >/dev/null; then
  cargo install cargo-fuzz --locked --quiet
fi
export RUSTC_BOOTSTRAP=1
if [[ ${FUZZ_ASAN:-0} == 1 ]]; then
  build=(--sanitizer address)
else
  build=(--sanitizer none --dev)
fi
if [[ -n ${FUZZ_RUNS:-} ]]; then
  budget=(-runs="$FUZZ_RUNS")
else
  budget=(-max_total_time="${FUZZ_SECONDS:-10}")
fi
# Every dependency's instrumented build is kept between runs outside the checkout (only this
# crate and the fuzz targets rebuild on a machine that ran this before).
TARGET_DIR=${AGENT_SEER_CACHE:-/var/cache/agent-seer}/fuzz-target
mkdir -p "$TARGET_DIR"
cd fuzz
cargo fuzz build "${build[@]}" --target-dir "$TARGET_DIR"
# --build-only: .ci/run builds the targets in the background while the first builds run.
[[ ${1:-} != --build-only ]] || exit 0
for target in $(cargo fuzz list); do
  corpus=$(mktemp -d)
  cp seeds/"$target"/* "$corpus"/
  out=$(cargo fuzz run "${build[@]}" --target-dir "$TARGET_DIR" "$target" "$corpus" -- \
    "${budget[@]}" -max_len=16384 -rss_limit_mb=4096 -timeout=20 2>&1) || {
    echo "$out" | tail -n 40
    echo "fuzz target $target failed"
    exit 1
  }
  echo "$target: $(echo "$out" | grep '^Done')"
  rm -rf "$corpus"
done
