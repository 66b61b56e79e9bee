#!/usr/bin/env bash
# Issue 31: is evaluation linear in the run's length? Generates a project with one suite whose
# scenario is a chain of N steps (`create_note` → a note's URI in its mock output → `tag_note`
# of that URI, N/2 times: references, ordered step pairs, repeated tools) and three transcripts of
# N calls: the correct run, one wrong value in the middle, one unrequested extra call, and the
# correct run written as one JSON line (every argument's key is found on that line). Then
# times `agent-seer check` over the project for each N (CALLS=, default "10 100 1000") and
# prints the wall time per call; then `agent-seer mutate` over the correct run alone. A bigger N repeats fewer copies of the transcripts so every
# size grades about the same number of calls (COPIES_CALLS=, default 20000).
#
# BIN= picks the binary (default: the release build, built first). KEEP=DIR leaves the
# generated projects under DIR (`DIR/n<N>`) for `farm-bench` or a profiler.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-target/release/agent-seer}
CALLS=${CALLS:-"10 100 1000"}
COPIES_CALLS=${COPIES_CALLS:-20000}
if [ "$BIN" = target/release/agent-seer ]; then
  bash bench/bin.sh --release
fi
if [ -n "${KEEP:-}" ]; then WORK=$KEEP; mkdir -p "$WORK"; else
  WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT; fi

python3 - "$WORK" "$COPIES_CALLS" $CALLS <<'PY'
import json, os, sys
work, budget, sizes = sys.argv[1], int(sys.argv[2]), [int(n) for n in sys.argv[3:]]
tools = [
    {"name": "create_note", "description": "Create a note.", "inputSchema": {"type": "object",
        "properties": {"title": {"type": "string"}, "body": {"type": "string"}},
        "required": ["title"]}},
    {"name": "tag_note", "description": "Tag a note by its id.", "inputSchema": {"type": "object",
        "properties": {"uri": {"type": "string"}, "tag": {"type": "string"}},
        "required": ["uri", "tag"]}},
]
def uri(k):
    return f"https://notes.example/n/{k:05d}"
def out(k):
    return {"content": [{"type": "text", "text": json.dumps({"uri": uri(k)})}],
            "structuredContent": {"uri": uri(k)}}
for n in sizes:
    root = f"{work}/n{n}"
    os.makedirs(f"{root}/harnesses", exist_ok=True)
    os.makedirs(f"{root}/transcripts/notes", exist_ok=True)
    open(f"{root}/Cargo.toml", "w").write('[package]\nname = "bench"\nversion = "0.0.0"\n')
    json.dump(tools, open(f"{root}/harnesses/notes.tools.json", "w"))
    half = max(1, n // 2)
    steps, calls = [], []
    for k in range(half):
        title, tag = f"Note {k}", f"t{k}"
        steps.append({"tool": "create_note", "arguments": {"title": title}, "mock_output": out(k)})
        steps.append({"tool": "tag_note", "arguments": {"uri": uri(k), "tag": tag}})
        calls.append({"tool": "create_note", "arguments": {"title": title}, "output": out(k)})
        calls.append({"tool": "tag_note", "arguments": {"uri": uri(k), "tag": tag}})
    prompt = "Create these notes and tag each: " + "; ".join(
        f"Note {k} tagged t{k}" for k in range(half)) + "."
    harness = {"suite": "notes", "tools": ["notes.tools.json"], "thresholds": {"pass": 0.8},
               "scenarios": [{"id": "chain", "tier": "complex", "title": "A chain of notes",
                              "turns": [{"prompt": prompt, "workflow": steps}]}]}
    # JSON is YAML: one line per value keeps the file small and the parser's work honest.
    json.dump(harness, open(f"{root}/harnesses/notes.yaml", "w"), indent=1)
    wrong = json.loads(json.dumps(calls))
    wrong[len(wrong) // 2 | 1]["arguments"]["tag"] = "wrong"
    extra = json.loads(json.dumps(calls))
    extra.insert(len(extra) // 2, {"tool": "create_note", "arguments": {"title": "Unasked"},
                                   "output": out(99999)})
    copies = max(1, budget // (4 * 2 * half))
    for c in range(copies):
        for name, cs, expect, indent in (("correct", calls, "pass", 1), ("wrong", wrong, "fail", 1),
                                         ("extra", extra, "fail", 1),
                                         ("oneline", calls, "pass", None)):
            t = {"scenario": "chain", "expect": expect, "calls": cs}
            json.dump(t, open(f"{root}/transcripts/notes/{c:04d}-{name}.yaml", "w"), indent=indent)
    print(f"n{n}: {copies} copies of 4 transcripts, {copies * 4 * 2 * half} calls", file=sys.stderr)
PY

for n in $CALLS; do
  root="$WORK/n$n"
  graded=$(find "$root/transcripts" -name '*.yaml' | wc -l)
  start=$(date +%s.%N)
  "$BIN" check --root "$root" --no-save --quiet >/dev/null || true
  end=$(date +%s.%N)
  python3 - "$n" "$graded" "$start" "$end" <<'PY'
import sys
n, graded, start, end = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
calls = graded * (2 * max(1, n // 2))
print(f"{n:>6} calls a run: {graded} transcripts, {end - start:.3f} s, {1e6 * (end - start) / calls:.2f} µs per call")
PY
done

# Mutation testing of one correct run of each size (`agent-seer mutate`: a bounded number of
# mutants, each a copy of the run graded by the engines): its cost per call should not grow
# with the run either (it was the run's length squared before: every call's mutants were
# built, then all but the first few of each kind thrown away).
for n in $CALLS; do
  root="$WORK/n$n"
  one="$WORK/mutate-n$n"
  rm -rf "$one"
  mkdir -p "$one/transcripts/notes"
  cp -r "$root/Cargo.toml" "$root/harnesses" "$one/"
  cp "$root/transcripts/notes/0000-correct.yaml" "$one/transcripts/notes/"
  start=$(date +%s.%N)
  # (A failing `mutate` stops the script; only a summary without a score is tolerated.)
  summary=$("$BIN" mutate --root "$one")
  mutants=$(grep -o '([0-9]*/[0-9]* killed)' <<<"$summary" || true)
  end=$(date +%s.%N)
  python3 - "$n" "$start" "$end" "$mutants" <<'PY'
import sys
n, start, end, mutants = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
calls = 2 * max(1, n // 2)
print(f"{n:>6} calls, mutate {mutants or '(no mutants)'}: {end - start:.3f} s, {1e6 * (end - start) / calls:.1f} µs per call of the run")
PY
done
