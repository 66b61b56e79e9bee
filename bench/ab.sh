#!/usr/bin/env bash
# Two commands timed side by side: A B A B … (RUNS= pairs, default 7, after one warm-up
# each), the wall time of each run, then each side's median and the median of the pairs'
# ratios A/B — the ratio of one pair is taken on the same machine state, so it holds when a
# shared machine's speed drifts.
#
#   bash bench/ab.sh 'target/release/agent-seer check --root P --no-save -q' \
#                    '/tmp/agent-seer-base/agent-seer check --root P --no-save -q'
set -euo pipefail
A=$1
B=$2
RUNS=${RUNS:-7}
# STRICT=1: exit 1 when a run of either command exits nonzero (by default a command that fails,
# a `check` of failing transcripts, is timed like any other).
STRICT=${STRICT:-0}
python3 - "$A" "$B" "$RUNS" "$STRICT" <<'PY'
import shlex, statistics, subprocess, sys, time
a, b, runs = shlex.split(sys.argv[1]), shlex.split(sys.argv[2]), int(sys.argv[3])
strict = sys.argv[4] == "1"
def run(cmd):
    start = time.perf_counter()
    code = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    if strict and code != 0:
        sys.exit(f"`{shlex.join(cmd)}` exited with {code}")
    return time.perf_counter() - start
run(a); run(b)
ta, tb = [], []
for _ in range(runs):
    ta.append(run(a)); tb.append(run(b))
ratios = [x / y for x, y in zip(ta, tb)]
fmt = lambda xs: f"median {statistics.median(xs):.3f} s (min {min(xs):.3f}, max {max(xs):.3f})"
print(f"A: {fmt(ta)}")
print(f"B: {fmt(tb)}")
print(f"A/B: median {statistics.median(ratios):.3f} (min {min(ratios):.3f}, max {max(ratios):.3f}), {runs} pairs")
PY
