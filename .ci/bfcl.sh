#!/usr/bin/env bash
# BFCL's own checker from PyPI (bfcl-eval, pinned), cached outside the checkout, then:
# the verdicts recorded in tests/data/bfcl/outputs.jsonl must be the ones it gives.
# Prints the unpacked package root on stdout's last line for callers (bench/bfcl.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=2026.3.23
CACHE=${AGENT_SEER_CACHE:-/var/cache/agent-seer}/bfcl-eval-$VERSION
if [ ! -f "$CACHE/bfcl_eval/eval_checker/ast_eval/ast_checker.py" ]; then
  tmp=$(mktemp -d)
  python3 -m pip download --quiet --no-deps --dest "$tmp" "bfcl-eval==$VERSION"
  mkdir -p "$CACHE"
  python3 -m zipfile -e "$tmp"/bfcl_eval-*.whl "$CACHE"
  rm -rf "$tmp"
fi
python3 bench/bfcl/bfcl_check.py "$CACHE" verify tests/data/bfcl tests/data/bfcl/outputs.jsonl >&2
echo "$CACHE"
