#!/usr/bin/env bash
# Re-captures the tools/list of the public MCP servers `agent-seer audit` is measured on
# (tests/fixtures/audit/<server>.tools.json; versions in tests/fixtures/audit/README.md) with
# `agent-seer inspect`, every server started inside a network namespace that has only
# loopback, with telemetry off and dummy credentials (these servers list their tools without
# reaching their service; server-redis is left out: it connects before it answers
# `initialize`). Packages are pinned and installed once into caches outside the
# checkout. CI does not run this; review `git diff tests/fixtures/audit/` after a bump.
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE=${AGENT_SEER_CACHE:-/var/cache/agent-seer}
NPM=$CACHE/audit-servers-npm-1
VENV=$CACHE/audit-servers-pypi-1
npm_pkgs=(
  @modelcontextprotocol/server-everything@2026.8.31
  @modelcontextprotocol/server-sequential-thinking@2026.8.31
  @modelcontextprotocol/server-github@2025.4.8
  @modelcontextprotocol/server-slack@2025.4.25
  @modelcontextprotocol/server-brave-search@0.6.2
  @modelcontextprotocol/server-gitlab@2025.4.25
  @modelcontextprotocol/server-postgres@0.6.2
  @modelcontextprotocol/server-google-maps@0.6.2
  @modelcontextprotocol/server-puppeteer@2025.5.12
  @notionhq/notion-mcp-server@2.5.2
)
pypi_pkgs=(mcp-server-fetch==2026.10.24)
# mcp-server-sqlite 2025.4.25 predates mcp 2 (it calls `Server.list_resources`): its own venv.
SQLITE=$CACHE/audit-servers-sqlite-1
sqlite_pkgs=(mcp-server-sqlite==2025.4.25 mcp==1.30.0)
if [[ ! -f $NPM/.complete ]]; then
  mkdir -p "$NPM"
  # No install scripts: puppeteer's would download a browser, and listing tools needs none.
  (cd "$NPM" && npm install --silent --no-audit --no-fund --ignore-scripts "${npm_pkgs[@]}")
  touch "$NPM/.complete"
fi
if [[ ! -f $VENV/.complete ]]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q "${pypi_pkgs[@]}"
  touch "$VENV/.complete"
fi
if [[ ! -f $SQLITE/.complete ]]; then
  python3 -m venv "$SQLITE"
  "$SQLITE/bin/pip" install -q "${sqlite_pkgs[@]}"
  touch "$SQLITE/.complete"
fi
bash bench/bin.sh
bin=$(realpath "${CARGO_TARGET_DIR:-target}/debug/agent-seer")
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
unshare -n env NPM="$NPM" VENV="$VENV" SQLITE="$SQLITE" BIN="$bin" SCRATCH="$scratch" OTEL_SDK_DISABLED=true \
  DO_NOT_TRACK=1 bash -euo pipefail -c '
  ip link set lo up
  out=tests/fixtures/audit
  m=$NPM/node_modules/@modelcontextprotocol
  cap() { local name=$1; shift; "$BIN" inspect -o "$out/$name.tools.json" -- "$@" >/dev/null; echo "captured $name"; }
  cap server-everything node "$m/server-everything/dist/index.js"
  cap server-sequential-thinking node "$m/server-sequential-thinking/dist/index.js"
  GITHUB_PERSONAL_ACCESS_TOKEN=dummy cap server-github node "$m/server-github/dist/index.js"
  SLACK_BOT_TOKEN=xoxb-dummy SLACK_TEAM_ID=T0 cap server-slack node "$m/server-slack/dist/index.js"
  BRAVE_API_KEY=dummy cap server-brave-search node "$m/server-brave-search/dist/index.js"
  GITLAB_PERSONAL_ACCESS_TOKEN=dummy cap server-gitlab node "$m/server-gitlab/dist/index.js"
  cap server-postgres node "$m/server-postgres/dist/index.js" postgresql://127.0.0.1:1/none
  GOOGLE_MAPS_API_KEY=dummy cap server-google-maps node "$m/server-google-maps/dist/index.js"
  cap server-puppeteer node "$m/server-puppeteer/dist/index.js"
  NOTION_TOKEN=dummy cap notion-mcp-server node "$NPM/node_modules/@notionhq/notion-mcp-server/bin/cli.mjs"
  cap mcp-server-fetch "$VENV/bin/mcp-server-fetch"
  cap mcp-server-sqlite "$SQLITE/bin/mcp-server-sqlite" --db-path "$SCRATCH/db.sqlite"
'
