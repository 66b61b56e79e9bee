#!/usr/bin/env bash
# Two commands timed side by side: A B A B … (RUNS= pairs, default 7, after one warm-up
# each), the wall time of each run, then each side's median and the median of the pairs'
# ratios A/B — the ratio of one pair is taken on the same machine state, so it holds when a
# shared machine's speed drifts.
#
#   bash bench/ab.sh 'target/release/agent-seer check --root P --no-save -q' \
#                    '/tmp/agent-seer-base/agent-seer check --root P --no-save -q'
#   RATE=1 bash bench/ab.sh 'env AGENT_SEER_BFCL_ONLY=evaluate /tmp/base/bfcl --bench' \
#                           'env AGENT_SEER_BFCL_ONLY=evaluate target/release/deps/bfcl-… --bench'
set -euo pipefail
A=$1
B=$2
RUNS=${RUNS:-7}
# STRICT=1: exit 1 when a run of either command exits nonzero (by default a command that fails,
# a `check` of failing transcripts, is timed like any other).
# RATE=1: each command measures itself and prints a rate (work per second) as the last number
# of its output (a bench binary with AGENT_SEER_BFCL_ONLY= or AGENT_SEER_ADK_ONLY=); the rates
# are compared in place of wall times, and the ratio is then B's rate over A's (B/A > 1: B is
# faster, as for wall times A/B).
STRICT=${STRICT:-0}
RATE=${RATE:-0}
python3 - "$A" "$B" "$RUNS" "$STRICT" "$RATE" <<'PY'
import re, shlex, statistics, subprocess, sys, time
a, b, runs = shlex.split(sys.argv[1]), shlex.split(sys.argv[2]), int(sys.argv[3])
strict, rate = sys.argv[4] == "1", sys.argv[5] == "1"
def run(cmd):
    start = time.perf_counter()
    done = subprocess.run(cmd, stdout=subprocess.PIPE if rate else subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL, text=True)
    if (strict or rate) and done.returncode != 0:
        sys.exit(f"`{shlex.join(cmd)}` exited with {done.returncode}")
    if rate:
        numbers = re.findall(r"[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?", done.stdout)
        if not numbers:
            sys.exit(f"`{shlex.join(cmd)}` printed no rate")
        return float(numbers[-1])
    return time.perf_counter() - start
run(a); run(b)
ta, tb = [], []
for _ in range(runs):
    ta.append(run(a)); tb.append(run(b))
if rate:
    ratios = [y / x for x, y in zip(ta, tb)]
    fmt = lambda xs: f"median {statistics.median(xs):,.0f}/s (min {min(xs):,.0f}, max {max(xs):,.0f})"
    name = "B/A (rates)"
else:
    ratios = [x / y for x, y in zip(ta, tb)]
    fmt = lambda xs: f"median {statistics.median(xs):.3f} s (min {min(xs):.3f}, max {max(xs):.3f})"
    name = "A/B"
print(f"A: {fmt(ta)}")
print(f"B: {fmt(tb)}")
print(f"{name}: median {statistics.median(ratios):.3f} (min {min(ratios):.3f}, max {max(ratios):.3f}), {runs} pairs")
PY
