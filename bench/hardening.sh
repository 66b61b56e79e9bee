#!/usr/bin/env bash
# Issue 32's two quadratic surfaces, timed with the release binary (BIN= picks another build,
# e.g. one of the commit before the fix):
#
# - `serve`: N `tools/call`s on one stdio session of the memory suite, no `--scenario`
#   (the attribution narrows as calls come): `read_graph` alone (no references), and
#   `search_nodes` then `open_nodes` repeated (a reference each call), and `read_graph` again
#   with `--record` (the transcript rewritten as calls come). CALLS= sets the sizes.
# - `audit`: a spec of TOOLS tools (each with a described parameter), one tool with a 1 MB
#   description, and two specs whose one parameter name is 100,000 characters.
#
# Prints one line per case: the wall time (seconds) of the whole process.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-target/release/agent-seer}
CALLS=${CALLS:-"400 4000 10000"}
TOOLS=${TOOLS:-3000}
if [ "$BIN" = target/release/agent-seer ]; then
  bash bench/bin.sh --release
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

python3 - "$WORK" "$TOOLS" "$CALLS" <<'PY'
import json, sys
work, tools, sizes = sys.argv[1], int(sys.argv[2]), [int(n) for n in sys.argv[3].split()]
def call(i, tool, args):
    return json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                       "params": {"name": tool, "arguments": args}}) + "\n"
init = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "clientInfo": {"name": "bench", "version": "1"}}}) + "\n"
for n in sizes:
    with open(f"{work}/read_graph-{n}.jsonl", "w") as f:
        f.write(init)
        for i in range(n):
            f.write(call(i + 1, "read_graph", {}))
    with open(f"{work}/open_nodes-{n}.jsonl", "w") as f:
        f.write(init)
        f.write(call(1, "search_nodes", {"query": "first published algorithm"}))
        for i in range(n - 1):
            f.write(call(i + 2, "open_nodes", {"names": ["Ada Lovelace"]}))
sentence = "Set it to one of: fast, slow. Support depends on the model. Defaults to fast. "
wide = [{"name": f"tool_{i}", "description": f"Tool number {i}.",
         "inputSchema": {"type": "object", "properties": {
             "mode": {"type": "string", "description": sentence},
             "count": {"type": "integer", "description": "How many, between 1 and 10."}},
             "required": ["mode"]}} for i in range(tools)]
json.dump(wide, open(f"{work}/wide.tools.json", "w"), indent=2)
long = sentence * (1_000_000 // len(sentence))
json.dump([{"name": "t", "description": long, "inputSchema": {"type": "object", "properties": {
    "mode": {"type": "string", "description": long}}}}], open(f"{work}/long.tools.json", "w"))
for k, name in (("a", "x" * 100_000), ("b", "x" * 99_999 + "y")):
    json.dump([{"name": "t", "description": "A tool.", "inputSchema": {"type": "object",
        "properties": {name: {"type": "string", "description": "The output bucket."}}}}],
        open(f"{work}/names-{k}.tools.json", "w"))
PY

timed() {
  local label=$1
  shift
  local start end
  start=$(date +%s.%N)
  # `audit` exits 1 on what it finds (MAY_FAIL=1); a `serve` session must end cleanly.
  if ! "$@" >/dev/null 2>&1 && [ "${MAY_FAIL:-0}" != 1 ]; then
    echo "bench/hardening.sh: $label: the command failed" >&2
    exit 1
  fi
  end=$(date +%s.%N)
  printf '%-44s %8.2f s\n' "$label" "$(echo "$end - $start" | bc)"
}

for n in $CALLS; do
  timed "serve, $n read_graph calls" \
    sh -c "'$BIN' serve harnesses/memory.yaml < '$WORK/read_graph-$n.jsonl'"
  timed "serve, $n open_nodes calls (references)" \
    sh -c "'$BIN' serve harnesses/memory.yaml < '$WORK/open_nodes-$n.jsonl'"
  timed "serve --record, $n read_graph calls" \
    sh -c "'$BIN' serve harnesses/memory.yaml --record '$WORK/rec.yaml' < '$WORK/read_graph-$n.jsonl'"
done
MAY_FAIL=1 timed "audit, $TOOLS tools" "$BIN" audit "$WORK/wide.tools.json"
MAY_FAIL=1 timed "audit, a 1 MB description" "$BIN" audit "$WORK/long.tools.json"
MAY_FAIL=1 timed "audit, two 100,000-character names" \
  "$BIN" audit "$WORK/names-a.tools.json" "$WORK/names-b.tools.json"
MAY_FAIL=1 timed "lint reading the $TOOLS-tool spec" \
  sh -c "echo '{}' | '$BIN' lint --spec '$WORK/wide.tools.json' -"
