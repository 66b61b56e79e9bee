#!/usr/bin/env bash
# Side by side, in one run: BFCL's own ast_checker (Python, bfcl-eval from PyPI) and
# agent-seer's check on the same model outputs of BFCL's four AST categories — every entry's
# first possible answer and a mutated copy. Prints the throughputs and the ratios.
set -euo pipefail
cd "$(dirname "$0")/.."
PKG=$(bash .ci/bfcl.sh | tail -1)
DATA="$PKG/bfcl_eval/data"
OUT=$(mktemp -d)
python3 bench/bfcl/outputs.py "$DATA" > "$OUT/outputs.jsonl"
# Each side checks every output pass after pass for at least BENCH_SECONDS after a warm-up
# pass; BFCL's checker runs before and after ours and the ratio takes its faster run.
BENCH_SECONDS=${BENCH_SECONDS:-2}
cargo build --release --bench bfcl --quiet
py1=$(python3 bench/bfcl/bfcl_check.py "$PKG" bench "$DATA" "$OUT/outputs.jsonl" "$BENCH_SECONDS")
rs=$(AGENT_SEER_BFCL_DATA="$DATA" AGENT_SEER_BFCL_OUTPUTS="$OUT/outputs.jsonl" AGENT_SEER_BFCL_SECONDS="$BENCH_SECONDS" \
  cargo bench --quiet --bench bfcl 2>/dev/null | tail -1)
py2=$(python3 bench/bfcl/bfcl_check.py "$PKG" bench "$DATA" "$OUT/outputs.jsonl" "$BENCH_SECONDS")
echo "bfcl ast_checker: $py1"
echo "bfcl ast_checker: $py2"
echo "agent-seer:       $rs"
python3 - "$py1" "$py2" "$rs" <<'PY'
import json, sys
py = max(json.loads(a)["per_second"] for a in sys.argv[1:3])
rs = json.loads(sys.argv[3])
print(f"BFCL's ast_checker: {py:,.0f} outputs/s (the faster run)")
for key, what in [("per_second", "verdict (fast path, engines where it cannot decide)"),
                  ("evaluate_per_second", "evaluate (score and findings; fast path for perfect ones)"),
                  ("engines_per_second", "every engine on every output")]:
    print(f"agent-seer {what}: {rs[key]:,.0f}/s = {rs[key] / py:.1f}x")
print(f"decided by the calls alone: {rs['decided_by_calls_alone']} of {rs['outputs']}; "
      f"lint alone {rs['lint_calls_per_second']:,.0f} calls/s")
PY
rm -rf "$OUT"
