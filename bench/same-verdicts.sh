#!/usr/bin/env bash
# Issue 31's safety net: two builds must grade every shipped suite alike. Runs `check --format
# json` of BASE and NEW over the project (or ROOT=), drops what differs between any two runs
# (the run id), and compares every trial: its status and message, each transcript's verdict,
# score and sub-dimensions, turn scores, trajectory metrics and findings (code, severity,
# message, location); then `mutate --format json` of both (every mutant of every correct run,
# killed or not, its TC and error codes). Prints the first differences and exits 1 when any;
# 0 when identical.
#
#   BASE=/tmp/agent-seer-base/agent-seer NEW=target/release/agent-seer bash bench/same-verdicts.sh
#
# SAVE=DIR keeps both normalised reports (base.json, new.json) there. MIN_TRIALS=N fails when
# fewer trials than N were graded (two empty reports are identical too).
set -euo pipefail
cd "$(dirname "$0")/.."
BASE=${BASE:?set BASE to the binary of the commit to compare with}
NEW=${NEW:-target/release/agent-seer}
ROOT=${ROOT:-$(pwd)}
OUT=${SAVE:-$(mktemp -d)}
mkdir -p "$OUT"
for side in base new; do
  bin=$BASE; [ "$side" = new ] && bin=$NEW
  "$bin" check --root "$ROOT" --format json --no-save > "$OUT/$side.raw.json" || true
  "$bin" mutate --root "$ROOT" --format json > "$OUT/$side.mutants.json" || true
done
if ! cmp -s "$OUT/base.mutants.json" "$OUT/new.mutants.json"; then
  diff "$OUT/base.mutants.json" "$OUT/new.mutants.json" | head -40
  echo "mutate: the two builds grade the mutants differently" >&2
  exit 1
fi
echo "mutate: identical ($(grep -c '"operator"' "$OUT/new.mutants.json") mutants)"
python3 - "$OUT" <<'PY'
import json, os, sys
out = sys.argv[1]
def load(side):
    r = json.load(open(f"{out}/{side}.raw.json"))
    r.pop("run_id", None)
    r["trials"] = sorted(r["trials"], key=lambda t: t["name"])
    json.dump(r, open(f"{out}/{side}.json", "w"), indent=1, sort_keys=True)
    return r
base, new = load("base"), load("new")
diffs = []
def walk(a, b, at):
    if type(a) != type(b):
        diffs.append((at, a, b)); return
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            walk(a.get(k), b.get(k), f"{at}/{k}")
    elif isinstance(a, list):
        if len(a) != len(b):
            diffs.append((f"{at} (length)", len(a), len(b)))
        for i, (x, y) in enumerate(zip(a, b)):
            walk(x, y, f"{at}/{i}")
    elif a != b:
        diffs.append((at, a, b))
names = lambda r: [t["name"] for t in r["trials"]]
if names(base) != names(new):
    diffs.append(("/trials (names)", len(base["trials"]), len(new["trials"])))
else:
    for t, u in zip(base["trials"], new["trials"]):
        walk(t, u, t["name"])
walk({k: v for k, v in base.items() if k != "trials"}, {k: v for k, v in new.items() if k != "trials"}, "")
trials = len(base["trials"])
transcripts = sum(1 for t in base["trials"] if t.get("transcript"))
least = int(os.environ.get("MIN_TRIALS", "0"))
if trials < least:
    sys.exit(f"only {trials} trials graded, fewer than MIN_TRIALS={least}")
if diffs:
    for at, a, b in diffs[:40]:
        print(f"{at}: {json.dumps(a)[:200]} → {json.dumps(b)[:200]}")
    print(f"{len(diffs)} differences over {trials} trials")
    sys.exit(1)
print(f"identical: {trials} trials ({transcripts} transcripts: verdicts, scores, trajectories, findings)")
PY
