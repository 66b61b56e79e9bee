#!/usr/bin/env bash
# Real MCP servers from npm and PyPI, inspected inside a network namespace that has only loopback, with
# telemetry off. Installed once into a cache outside the checkout.
set -euo pipefail
cd "$(dirname "$0")/.."
NPM=${AGENT_SEER_NPM:-${AGENT_SEER_CACHE:-/var/cache/agent-seer}/npm-2026.8.31}
# Every server the ignored tests in tests/mcp/ start (real.rs, generic.rs), at one version.
servers=(server-everything@2026.8.31 server-filesystem@2026.8.31 server-memory@2026.8.31)
missing=0
for s in "${servers[@]}"; do
  [[ -f $NPM/node_modules/@modelcontextprotocol/${s%@*}/dist/index.js ]] || missing=1
done
if [[ $missing == 1 ]]; then
  mkdir -p "$NPM"
  (cd "$NPM" && npm install --silent --no-audit --no-fund "${servers[@]/#/@modelcontextprotocol/}")
fi
# The PyPI servers tests/mcp/generic_pypi.rs starts (mcp-server-git, mcp-server-time), a venv
# cached outside the checkout; the git tests also need git itself.
# `agent-seer ground` runs the time server under a frozen clock (the time suite's
# `ground.clock`), through libfaketime.
need=()
command -v git >/dev/null || need+=(git)
command -v faketime >/dev/null || need+=(faketime)
if (( ${#need[@]} )); then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
PYPI=$(bash .ci/servers-pypi.sh | tail -1)
# The SQL servers tests/mcp/sql.rs starts (mcp-server-duckdb, mcp-server-sqlite).
SQL=$(bash .ci/servers-sql.sh | tail -1)
[[ -z ${AGENT_SEER_PREPARE:-} ]] || exit 0  # .ci/prepare.sh: installs only
cargo test --no-run --test mcp -q
exec unshare -n env AGENT_SEER_NPM="$NPM" AGENT_SEER_PYPI_SERVERS="$PYPI" AGENT_SEER_SQL_SERVERS="$SQL" OTEL_SDK_DISABLED=true bash -euo pipefail -c '
  ip link set lo up
  cargo test --offline --test mcp -- --ignored --test-threads 1
'
