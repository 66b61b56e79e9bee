#!/usr/bin/env bash
# The harness at scale: N transcripts (default 10,000), copies of the shipped ones spread over
# the shipped suites, in a throwaway project. Times `cargo test --release --test agents` after
# the build, a nextest run of the same trials (one process per trial, each through the
# `--exact` fast path), and the peak memory of the cargo test run.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-10000}
PROJECT=$(mktemp -d)
cp -r harnesses capabilities "$PROJECT/"
python3 bench/copies.py "$PROJECT" "$N"
cargo test --release --test agents --no-run --quiet 2>/dev/null
export AGENT_SEER_ROOT="$PROJECT" AGENT_SEER_REPORT_DIR="$PROJECT/run"
listed=$(cargo test --release --quiet --test agents -- --list 2>/dev/null | grep -c ': test$')
echo "trials listed: $listed"
/usr/bin/time -f "cargo test: %e s wall, %M KiB peak RSS" cargo test --release --quiet --test agents 2>&1 | grep -E "test result|cargo test:"
if command -v cargo-nextest >/dev/null && [ "${NEXTEST:-1}" = 1 ]; then
  /usr/bin/time -f "nextest: %e s wall, %M KiB peak RSS" cargo nextest run --release --test agents --no-fail-fast --status-level none --final-status-level none 2>&1 | grep -E "Summary|nextest:"
fi
rm -rf "$PROJECT"
