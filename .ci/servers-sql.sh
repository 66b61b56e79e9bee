#!/usr/bin/env bash
# Real SQL MCP servers from PyPI — mcp-server-duckdb 1.1.0 and mcp-server-sqlite 2025.4.25 —
# pinned with every dependency, so the tools/list the suites were captured from
# (harnesses/duckdb.tools.json, harnesses/sqlite.tools.json) and every recorded answer stay
# reproducible, installed once into a virtualenv cached outside the checkout. Idempotent.
# Prints the venv's path on stdout's last line for callers:
#   AGENT_SEER_SQL_SERVERS="$(bash .ci/servers-sql.sh | tail -1)"
#
# mcp is pinned to 1.30.0: neither server caps it, and under mcp 2.x both fail at start-up
# (`'Server' object has no attribute 'list_resources'`: the low-level Server API changed).
# PyYAML is not a server dependency: tests/fixtures/duckdb/client.py (which records and checks
# the suites' outputs against these servers) reads the harness and transcripts with it.
set -euo pipefail
VERSION=duckdb-1.1.0-sqlite-2025.4.25
VENV=${AGENT_SEER_CACHE:-/var/cache/agent-seer}/pypi-sql-$VERSION
if [ ! -f "$VENV/.complete" ]; then
  rm -rf "$VENV"
  mkdir -p "$(dirname "$VENV")"
  python3 -m venv "$VENV"
  pins=$(mktemp)
  # `pip freeze` of the venv the suites were captured with.
  cat >"$pins" <<'PINS'
mcp-server-duckdb==1.1.0
mcp-server-sqlite==2025.4.25
mcp[cli]==1.30.0
PyYAML==6.0.4
annotated-doc==0.0.7
annotated-types==0.8.0
anyio==4.16.0
attrs==26.1.0
certifi==2026.10.19.post1
cffi==2.1.1
click==8.5.1
cryptography==50.0.2
duckdb==2.0.1
h11==0.16.0
httpcore==1.0.9
httpx==0.29.0
httpx-sse==0.4.3
idna==3.20
jsonschema==4.26.0
jsonschema-specifications==2025.9.1
markdown-it-py==4.3.0
mdurl==0.1.2
pycparser==3.12
pydantic==2.14.4
pydantic-settings==2.16.3
pydantic_core==2.50.5
Pygments==2.21.0
PyJWT==2.15.1
python-dotenv==1.2.4
python-multipart==0.0.34
referencing==0.37.0
rich==15.0.0
rpds-py==2026.9.1
shellingham==1.5.4
sse-starlette==3.7.1
starlette==1.10.0
typer==0.29.2
typing-inspection==0.4.5
typing_extensions==4.16.0
uvicorn==0.55.0
PINS
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$pins" >&2
  rm -f "$pins"
  touch "$VENV/.complete"
fi
echo "$VENV"
