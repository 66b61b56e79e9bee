#!/usr/bin/env bash
# What one evaluation costs in instructions and in cache misses, counted under callgrind with
# its cache simulated: figures that move by tenths of a per cent from run to run, where
# side-by-side wall times on a shared machine move by 10–15 % (bench/ab.sh), so a change of a
# few per cent to the evaluation core can be told from noise. BFCL's four AST categories (the
# package .ci/bfcl.sh caches), each entry's mutated output (a wrong answer: the engines' whole
# path) or, with WHICH=right, its right one (the reference run's shortcut), or WHICH=all.
#
#   bash bench/counts.sh                      # this checkout's bfcl bench
#   BIN=/tmp/base-bfcl bash bench/counts.sh   # another build's bench binary (same data)
#
# Two runs collect inside `evaluate` only: a warm-up pass and PASSES passes, then a warm-up
# and 1 pass; their difference over the checks between them is the passes' own cost, with
# each suite's set-up and each scenario's first use (built once) left out. The simulated
# last-level cache is LL bytes (default 8 MiB, 16-way), the first-level data cache 48 KiB.
# Between runs, instructions move by a few tenths of a per cent and misses by a few tenths an
# evaluation (each run's memory lies at other addresses, its hash maps seeded afresh), so a
# figure near 0 may print as -0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
WHICH=${WHICH:-wrong}
PASSES=${PASSES:-6}
LL=${LL:-8388608}
command -v valgrind >/dev/null || { echo "counts.sh: needs valgrind (apt-get install valgrind)" >&2; exit 1; }
case "$WHICH" in
  wrong) keep='-mutated"' ;;
  right) keep='-correct"' ;;
  all) keep='"id"' ;;
  *) echo "counts.sh: WHICH=$WHICH: wrong, right or all" >&2; exit 1 ;;
esac
((PASSES >= 2)) || { echo "counts.sh: PASSES=$PASSES: 2 or more (one run of 1 pass is subtracted)" >&2; exit 1; }
PKG=$(bash .ci/bfcl.sh | tail -1)
DATA="$PKG/bfcl_eval/data"
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
python3 bench/bfcl/outputs.py "$DATA" | grep -F -- "$keep" > "$OUT/outputs.jsonl"
if [ -z "${BIN:-}" ]; then
  BIN=$(cargo bench --no-run --bench bfcl --message-format=json 2>/dev/null |
    python3 bench/executable.py bfcl | tail -1)
fi
run() {
  AGENT_SEER_BFCL_DATA="$DATA" AGENT_SEER_BFCL_OUTPUTS="$OUT/outputs.jsonl" AGENT_SEER_BFCL_ONLY=evaluate \
    AGENT_SEER_BFCL_PASSES="$1" valgrind --tool=callgrind --cache-sim=yes --D1=49152,12,64 --LL="$LL,16,64" \
    --toggle-collect='agent_seer::check::evaluate::evaluate' --callgrind-out-file="$OUT/cg.$1" \
    "$BIN" --bench > "$OUT/log.$1" 2>&1 || { cat "$OUT/log.$1" >&2; exit 1; }
}
run 1
run "$PASSES"
python3 - "$OUT" "$PASSES" "$WHICH" "$LL" <<'PY'
import re, sys
out, passes, which, ll = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
def read(n):
    log = open(f"{out}/log.{n}").read()
    checks = int(re.search(r"(\d+) checks timed", log).group(1))
    counts = [int(x) for x in re.search(r"Collected : ([\d ]+)", log).group(1).split()]
    # callgrind's events with the cache simulated: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw
    return checks, dict(zip("Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw".split(), counts))
c1, one = read(1)
cn, many = read(passes)
n = cn - c1
each = {k: (many[k] - one[k]) / n for k in one}
print(f"{which} outputs, {n} evaluations ({c1} a pass), per evaluation: "
      f"{each['Ir']:,.0f} instructions, {each['Dr'] + each['Dw']:,.0f} data reads and writes, "
      f"{each['D1mr'] + each['D1mw']:,.1f} first-level data misses, "
      f"{each['DLmr'] + each['DLmw']:,.1f} last-level misses ({ll // 1048576} MiB simulated)")
PY
