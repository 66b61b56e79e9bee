#!/usr/bin/env bash
# Runs every cargo-fuzz target briefly from its committed seeds (fuzz/seeds/<target>/).
# The machine has one (stable) toolchain; RUSTC_BOOTSTRAP=1 lets cargo-fuzz pass its
# sanitizer flags to it. FUZZ_RUNS inputs per target (default 2,000; the recorded runs of
# 20,000 each are in BENCHMARKS.md).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${FUZZ_RUNS:-2000}
if ! command -v cargo-fuzz >/dev/null; then
  cargo install cargo-fuzz --locked --quiet
fi
export RUSTC_BOOTSTRAP=1
# The sanitizer build of every dependency is kept between runs outside the checkout (only this
# crate and the fuzz targets rebuild): about 8 minutes saved per CI run on the 2-core machine.
TARGET_DIR=${AGENT_SEER_FUZZ_TARGET:-/var/cache/agent-seer/fuzz-target}
mkdir -p "$TARGET_DIR"
cd fuzz
cargo fuzz build --target-dir "$TARGET_DIR"
for target in $(cargo fuzz list); do
  corpus=$(mktemp -d)
  cp seeds/"$target"/* "$corpus"/
  out=$(cargo fuzz run --target-dir "$TARGET_DIR" "$target" "$corpus" -- -runs="$RUNS" -max_len=16384 -rss_limit_mb=4096 -timeout=20 2>&1) || {
    echo "$out" | tail -n 40
    echo "fuzz target $target failed"
    exit 1
  }
  echo "$target: $(echo "$out" | grep '^Done')"
  rm -rf "$corpus"
done
