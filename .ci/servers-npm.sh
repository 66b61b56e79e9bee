#!/usr/bin/env bash
# Re-captures the tools/list of the generic npm servers the `memory` and `filesystem` suites
# grade (harnesses/memory.tools.json, harnesses/filesystem.tools.json) with `agent-seer
# inspect`, each server started inside a network namespace that has only loopback, with
# telemetry off. Run it after bumping the servers' version (here and in .ci/mcp-e2e.sh), then
# review `git diff harnesses/` and `agent-seer diff-spec`. CI does not write: the ignored tests
# in tests/mcp/generic.rs (run by .ci/mcp-e2e.sh) fail when a server's tools/list differs from
# the shipped file.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=2026.8.31
NPM=${AGENT_SEER_NPM:-${AGENT_SEER_CACHE:-/var/cache/agent-seer}/npm-$VERSION}
servers=(server-memory server-filesystem)
missing=0
for s in "${servers[@]}"; do
  [[ -f $NPM/node_modules/@modelcontextprotocol/$s/dist/index.js ]] || missing=1
done
if [[ $missing == 1 ]]; then
  mkdir -p "$NPM"
  (cd "$NPM" && npm install --silent --no-audit --no-fund "${servers[@]/#/@modelcontextprotocol/}"@$VERSION)
fi
bash bench/bin.sh
bin=${CARGO_TARGET_DIR:-target}/debug/agent-seer
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir "$scratch/root"
unshare -n env NPM="$NPM" BIN="$bin" SCRATCH="$scratch" OTEL_SDK_DISABLED=true bash -euo pipefail -c '
  ip link set lo up
  m=$NPM/node_modules/@modelcontextprotocol
  MEMORY_FILE_PATH=$SCRATCH/memory.jsonl "$BIN" inspect -o harnesses/memory.tools.json -- node "$m/server-memory/dist/index.js"
  "$BIN" inspect -o harnesses/filesystem.tools.json -- node "$m/server-filesystem/dist/index.js" "$SCRATCH/root"
'
