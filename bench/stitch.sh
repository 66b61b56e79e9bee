#!/usr/bin/env bash
# Stitching recorded runs spread over many traces (the recorded-runs guide quotes it): RUNS
# runs of 10 traces each, and a tenth of them, imported by `agent-seer import trace` (release
# build, every run written as a transcript). Reports each size's median of ROUNDS wall times
# and the ratio: 10× the traces should take about 10× the time.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-1000}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
python3 bench/stitch/traces.py "$RUNS" 10 "$WORK/big.jsonl"
python3 bench/stitch/traces.py "$((RUNS / 10))" 10 "$WORK/small.jsonl"
bash bench/bin.sh --release
python3 - "$PWD/target/release/agent-seer" "$WORK" "$RUNS" "${ROUNDS:-3}" <<'PY'
import os, shutil, statistics, subprocess, sys, time
bin, work, runs, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
def median(name):
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        subprocess.run([bin, "import", "trace", f"{work}/{name}.jsonl", "--suite", "time",
                        "--scenario", "local-time", "-o", f"{work}/out", "--force"],
                       check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
        shutil.rmtree(f"{work}/out")
    return statistics.median(times), times
def mb(name):
    return os.path.getsize(f"{work}/{name}.jsonl") / 1e6
small, small_rounds = median("small")
big, big_rounds = median("big")
show = lambda ts: ", ".join(f"{t:.3f}" for t in ts)
print(f"{runs // 10} runs, {runs} traces ({mb('small'):.1f} MB): {small:.3f} s (rounds: {show(small_rounds)})")
print(f"{runs} runs, {runs * 10} traces ({mb('big'):.1f} MB): {big:.3f} s (rounds: {show(big_rounds)})")
print(f"{big / small:.1f}x the time for 10x the traces")
PY
