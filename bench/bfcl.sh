#!/usr/bin/env bash
# Side by side, in one run: BFCL's own ast_checker (Python, bfcl-eval from PyPI) and
# agent-seer's check (lint + flow + oracle score) on the same model outputs of BFCL's four
# AST categories — every entry's first possible answer and a mutated copy. Prints both
# throughputs and the ratio.
set -euo pipefail
cd "$(dirname "$0")/.."
PKG=$(bash .ci/bfcl.sh | tail -1)
DATA="$PKG/bfcl_eval/data"
OUT=$(mktemp -d)
python3 bench/bfcl/outputs.py "$DATA" > "$OUT/outputs.jsonl"
REPS=${REPS:-5}
py=$(python3 bench/bfcl/bfcl_check.py "$PKG" bench "$DATA" "$OUT/outputs.jsonl" "$REPS")
cargo build --release --bench bfcl --quiet
rs=$(AGENT_SEER_BFCL_DATA="$DATA" AGENT_SEER_BFCL_OUTPUTS="$OUT/outputs.jsonl" AGENT_SEER_BFCL_REPS="$REPS" \
  cargo bench --quiet --bench bfcl 2>/dev/null | tail -1)
echo "bfcl ast_checker: $py"
echo "agent-seer check: $rs"
python3 - "$py" "$rs" <<'PY'
import json, sys
py, rs = json.loads(sys.argv[1]), json.loads(sys.argv[2])
print(f"ratio: agent-seer checks {rs['per_second'] / py['per_second']:.1f}x as many outputs per second "
      f"({rs['per_second']:,.0f}/s vs {py['per_second']:,.0f}/s); lint alone {rs['lint_calls_per_second']:,.0f} calls/s")
PY
rm -rf "$OUT"
