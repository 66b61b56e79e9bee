#!/usr/bin/env bash
# Side by side, in one run: BFCL's own ast_checker (Python, bfcl-eval from PyPI) and
# agent-seer's check on the same model outputs of BFCL's four AST categories — every entry's
# first possible answer and a mutated copy. Prints the throughputs and the ratios.
# OUTPUTS=last: each entry's answer of last possible values alone (correct, and not the
# scenario's workflow wherever an entry allows more than one answer; bench/bfcl/outputs.py).
# FEATURES picks agent-seer's build: `FEATURES='--no-default-features --features cli'` runs it
# with the system's allocator instead of mimalloc (BENCHMARKS.md gives both).
set -euo pipefail
cd "$(dirname "$0")/.."
FEATURES=${FEATURES:-}
PKG=$(bash .ci/bfcl.sh | tail -1)
DATA="$PKG/bfcl_eval/data"
OUT=$(mktemp -d)
python3 bench/bfcl/outputs.py "$DATA" ${OUTPUTS:-} > "$OUT/outputs.jsonl"
# Each side checks every output pass after pass for at least BENCH_SECONDS after a warm-up
# pass. The two sides take turns, BENCH_ROUNDS times each; each side's best round counts (a
# busy machine only ever slows a side down), and every round is printed.
BENCH_SECONDS=${BENCH_SECONDS:-2}
BENCH_ROUNDS=${BENCH_ROUNDS:-3}
# shellcheck disable=SC2086
cargo build --release $FEATURES --bench bfcl --quiet
: > "$OUT/py"
: > "$OUT/rs"
for _ in $(seq "$BENCH_ROUNDS"); do
  python3 bench/bfcl/bfcl_check.py "$PKG" bench "$DATA" "$OUT/outputs.jsonl" "$BENCH_SECONDS" >> "$OUT/py"
  AGENT_SEER_BFCL_DATA="$DATA" AGENT_SEER_BFCL_OUTPUTS="$OUT/outputs.jsonl" AGENT_SEER_BFCL_SECONDS="$BENCH_SECONDS" \
    cargo bench --quiet $FEATURES --bench bfcl 2>/dev/null | tail -1 >> "$OUT/rs"
done
python3 - "$OUT/py" "$OUT/rs" <<'PY'
import json, sys
py = [json.loads(l) for l in open(sys.argv[1])]
rs = [json.loads(l) for l in open(sys.argv[2])]
def rounds(runs, key):
    return ", ".join(f"{r[key]:,.0f}" for r in runs)
best_py = max(r["per_second"] for r in py)
print(f"BFCL's ast_checker: {best_py:,.0f} outputs/s (best of {len(py)} rounds: {rounds(py, 'per_second')})")
for key, what in [("per_second", "verdict (fast path, engines where it cannot decide)"),
                  ("evaluate_per_second", "evaluate (score and findings; an output the fast path finds perfect, its calls in order, gets the reference run's score)"),
                  ("engines_per_second", "evaluate_with_engines (every engine on every output)")]:
    best = max(r[key] for r in rs)
    print(f"agent-seer {what}: {best:,.0f}/s = {best / best_py:.1f}x (rounds: {rounds(rs, key)})")
last = rs[-1]
print(f"decided by the calls alone: {last['decided_by_calls_alone']} of {last['outputs']}; "
      f"lint alone {max(r['lint_calls_per_second'] for r in rs):,.0f} calls/s")
PY
rm -rf "$OUT"
