#!/usr/bin/env bash
# Every benchmark, briefly, so none can break unnoticed (issue 31: `bench/scale.sh` and
# `cargo bench --bench check` broke and nothing ran them). Small sizes and short timings: the
# point is that each runs to its end, not its figure; BENCHMARKS.md has the full runs.
# `bench/hardening.sh` runs from .ci/run itself; `bench/llm-quality.sh` needs the local model
# server of .ci/llm-e2e.sh and runs there (QUALITY_* sizes at their smallest).
set -euo pipefail
cd "$(dirname "$0")/.."
step() {
  local start=$SECONDS
  echo "bench: $*" >&2
  "$@"
  echo "bench: $1 … done in $((SECONDS - start)) s" >&2
}
# The criterion benches in test mode: each case runs once.
step cargo bench --quiet --bench lint --bench check --bench ingest -- --test
# The mock-LLM concurrency benches with a 5 ms answer in place of 200 ms.
AGENT_SEER_BENCH_DELAY_MS=5 step cargo bench --quiet --bench judge_concurrency
AGENT_SEER_BENCH_DELAY_MS=5 step cargo bench --quiet --bench generate_concurrency
# BFCL side by side with its own checker (the package .ci/bfcl.sh cached): one short round.
BENCH_SECONDS=0.2 BENCH_ROUNDS=1 step bash bench/bfcl.sh
# What a wrong answer's evaluation costs in instructions and cache misses, under callgrind:
# the shortest count (a pass beside two).
PASSES=2 step bash bench/counts.sh
# The harness at scale: 300 transcripts over every shipped suite, recorded runs included,
# under cargo test and nextest.
N=300 step bash bench/scale.sh
# Issue 31's bar, one short round: a trial process under nextest beside an empty test's, and
# `--exact` run directly (needs cargo-nextest, which .ci/run installs).
ROUNDS=1 REPEAT=1 step bash bench/trial.sh
# `check` in bounded memory beside parsing alone: 300 transcripts (30,000 in BENCHMARKS.md).
N=300 step bash bench/memory.sh
# Linear in the run's length: runs of 10 and 100 calls.
CALLS="10 100" COPIES_CALLS=2000 step bash bench/calls.sh
# A 2 MB OTLP trace graded by `check`.
MB=2 step bash bench/ingest.sh
# Runs stitched from many traces: 100 runs of 10 traces beside 10 of them.
RUNS=100 ROUNDS=1 step bash bench/stitch.sh
# The safety net of every engine change (bench/same-verdicts.sh compares two builds' grading
# of every shipped suite and its mutants): here both sides are this build, so any difference
# is grading that changes from run to run.
step bash bench/bin.sh --release
BASE=target/release/agent-seer MIN_TRIALS=200 step bash bench/same-verdicts.sh
# The side-by-side timer the speed claims are made with, one pair.
RUNS=1 STRICT=1 step bash bench/ab.sh 'target/release/agent-seer check --no-save' 'target/release/agent-seer check --no-save'
# … and its rate mode, on the BFCL bench over its shipped sample.
bfcl_rate='env AGENT_SEER_BFCL_ONLY=evaluate AGENT_SEER_BFCL_SECONDS=0.1 cargo bench --quiet --bench bfcl'
RUNS=1 RATE=1 step bash bench/ab.sh "$bfcl_rate" "$bfcl_rate"
# A fresh user crate on the lean build (default features: in BENCHMARKS.md).
step bash bench/user-crate.sh lean
