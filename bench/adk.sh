#!/usr/bin/env bash
# Issue 31: side by side, in one run, Google ADK's own TrajectoryEvaluator (google-adk in the
# venv tests/fixtures/adk/regenerate.sh makes) and agent-seer's `check::evaluate`, both in
# process, on the same cases: ADK's sample (tests/fixtures/adk: eval sets and the recorded
# runs, every case both grade) and runs of CALLS calls (default 200; one correct, one with a
# wrong argument) that bench/adk_bench.py writes as ADK eval sets. Both sides read the same
# files: ADK with its loaders, agent-seer through its ADK import (benches/adk.rs). Only the
# evaluation is timed: each side evaluates every case of a group pass after pass for at least
# BENCH_SECONDS (default 1) after a warm-up pass. The sides take turns (ADK, agent-seer, ADK,
# …), BENCH_ROUNDS times each (default 5); printed: each side's evaluations/s (median over the
# rounds), the median of the rounds' agent-seer/ADK ratios and every round's ratio (the long
# runs also case by case), and how the verdicts and scores compare. Quick (CI): BENCH_ROUNDS=1
# BENCH_SECONDS=0.2, under half a minute after the build. FEATURES picks agent-seer's build:
# `FEATURES='--no-default-features --features cli'` runs it with the system's allocator
# instead of mimalloc (BENCHMARKS.md gives both).
# (`SECONDS` cannot be the knob: bash keeps its own SECONDS, the shell's age.)
#
# ADK runs with telemetry off in a loopback-only network namespace (`unshare -n`: root). Exits
# nonzero when either side fails, or when the verdicts or scores differ other than where they
# are known to (the ADK import test, tests/cli/adk.rs, names those).
set -euo pipefail
cd "$(dirname "$0")/.."
FEATURES=${FEATURES:-}
VENV=${AGENT_SEER_CACHE:-/var/cache/agent-seer}/adk-venv
CALLS=${CALLS:-200}
BENCH_SECONDS=${BENCH_SECONDS:-1}
BENCH_ROUNDS=${BENCH_ROUNDS:-5}
# The pinned ADK: the venv regenerate.sh stamps with its requirements' hash.
want=$(sha256sum tests/fixtures/adk/requirements.txt | cut -d' ' -f1)
if [ "$(cat "$VENV/.requirements.sha256" 2>/dev/null)" != "$want" ]; then
  echo "no ADK venv at $VENV for tests/fixtures/adk/requirements.txt: run tests/fixtures/adk/regenerate.sh" >&2
  exit 2
fi
adk() {
  OTEL_SDK_DISABLED=true PYTHONDONTWRITEBYTECODE=1 TZ=UTC \
    unshare -n bash -c 'ip link set lo up && exec "$@"' _ "$VENV/bin/python" bench/adk_bench.py "$@"
}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

# The cases: the long runs written by ADK's own models, and the manifest both sides read.
adk cases "$OUT/cases" "$CALLS"
# shellcheck disable=SC2086
cargo bench --quiet $FEATURES --bench adk --no-run
: > "$OUT/py"
: > "$OUT/rs"
for _ in $(seq "$BENCH_ROUNDS"); do
  adk time "$OUT/cases/manifest.json" "$BENCH_SECONDS" >> "$OUT/py"
  AGENT_SEER_ADK_MANIFEST="$OUT/cases/manifest.json" AGENT_SEER_ADK_SECONDS="$BENCH_SECONDS" \
    cargo bench --quiet $FEATURES --bench adk | tail -1 >> "$OUT/rs"
done

python3 - "$OUT/py" "$OUT/rs" "$OUT/cases/manifest.json" <<'PY'
import json, statistics, sys
py = [json.loads(l) for l in open(sys.argv[1])]
rs = [json.loads(l) for l in open(sys.argv[2])]
excluded = json.load(open(sys.argv[3]))["excluded"]
# Where agent-seer is meant to differ from ADK (tests/cli/adk.rs's snapshot; the fixture
# README's "Behaviours worth knowing"): verdicts, and ADK's score vs our literal trajectory.
KNOWN_VERDICTS = {
    "time_single/empty_expected_with_calls": "nothing expected: ADK's IN_ORDER passes any call; the unrequested call fails TC",
    "memory_graph/args_none_vs_empty": "ADK: args None != {}; agent-seer reads absent arguments as {}",
    "memory_graph/forget_unrequested_delete": "ADK's ANY_ORDER ignores the extra delete; agent-seer: oracle.unrequested_effect",
    "memory_graph/numbers_and_types": "ADK passes 2/3 at threshold 0.5; agent-seer: lint.type on the wrong-typed arguments",
}
KNOWN_SCORES = {"memory_graph/args_none_vs_empty"}

def num(x):
    return f"{x:,.0f}" if x >= 100 else f"{x:.1f}"

print(f"Google ADK {py[0]['adk_version']} TrajectoryEvaluator vs agent-seer check::evaluate, in process, "
      f"{len(py)} interleaved round(s) a side; excluded (ADK cannot score them): {'; '.join(excluded) or 'none'}")
bad = []
for g in py[0]:
    if g == "adk_version":
        continue
    a, b = [r[g] for r in py], [r[g] for r in rs]
    ratios = [y["per_second"] / x["per_second"] for x, y in zip(a, b)]
    fast = [y["verdict_per_second"] / x["per_second"] for x, y in zip(a, b)]
    med = lambda rows, k: statistics.median(r[k] for r in rows)
    print(f"{g}: {b[0]['cases']} cases, {b[0]['calls']} calls; ADK {num(med(a, 'per_second'))} evaluations/s, "
          f"agent-seer evaluate {num(med(b, 'per_second'))}/s, verdict {num(med(b, 'verdict_per_second'))}/s "
          f"(the calls alone decide {b[0]['decided_by_calls_alone']} of {b[0]['cases']})")
    print(f"  agent-seer/ADK, median of rounds: evaluate {statistics.median(ratios):.3g}x "
          f"(rounds: {', '.join(f'{r:.3g}' for r in ratios)}); verdict {statistics.median(fast):.3g}x")
    # The cases timed one by one (the manifest's `each`).
    for c in a[0].get("each", {}):
        x = statistics.median(r["each"][c] for r in a)
        y = statistics.median(r["each"][c] for r in b)
        each = statistics.median(q["each"][c] / p["each"][c] for p, q in zip(a, b))
        print(f"  {c}: ADK {num(x)}/s, agent-seer evaluate {num(y)}/s, median of rounds {each:.3g}x")
    # Verdicts: ADK's status at the set's threshold (configured match type) vs agent-seer's.
    theirs, ours = a[-1]["verdicts"], b[-1]["verdicts"]
    assert theirs.keys() == ours.keys(), "the two sides graded different cases"
    both = {True: 0, False: 0}
    differ, scores = [], []
    for c in theirs:
        t, o = theirs[c], ours[c]
        if t["pass"] == o["pass"]:
            both[t["pass"]] += 1
        else:
            differ.append(c)
            why = KNOWN_VERDICTS.get(c)
            if why is None:
                bad.append(f"{c}: ADK {'pass' if t['pass'] else 'fail'}, agent-seer {'pass' if o['pass'] else 'fail'} "
                           f"(TC {o['tc']}, {', '.join(o['errors']) or 'no errors'})")
        if o["score"] is None or abs(t["score"] - o["score"]) > 1e-9:
            scores.append(c)
            if c not in KNOWN_SCORES:
                bad.append(f"{c}: ADK score {t['score']}, agent-seer's literal trajectory {o['score']}")
    print(f"  verdicts: {both[True] + both[False]} of {len(theirs)} agree (both pass {both[True]}, both fail {both[False]}); "
          f"ADK pass / agent-seer fail {sum(theirs[c]['pass'] for c in differ)}, "
          f"ADK fail / agent-seer pass {sum(not theirs[c]['pass'] for c in differ)}"
          + "".join(f"\n    {c}: {KNOWN_VERDICTS.get(c, 'NOT EXPECTED')}" for c in differ))
    print(f"  ADK's score = agent-seer's literal trajectory at the configured match type: "
          f"{len(theirs) - len(scores)} of {len(theirs)}" + (f" (not: {', '.join(scores)})" if scores else ""))
if bad:
    sys.exit("unexpected disagreements:\n" + "\n".join(bad))
PY
