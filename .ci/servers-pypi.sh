#!/usr/bin/env bash
# Real MCP servers from PyPI — mcp-server-git and mcp-server-time, pinned with every
# dependency, so the tools/list the suites were captured from (harnesses/git.tools.json,
# harnesses/time.tools.json) stays the one CI compares with — installed once into a
# virtualenv cached outside the checkout. Idempotent. Prints the venv's path on stdout's last
# line for callers: AGENT_SEER_PYPI_SERVERS="$(bash .ci/servers-pypi.sh | tail -1)".
set -euo pipefail
VERSION=2026.10.19
VENV=${AGENT_SEER_CACHE:-/var/cache/agent-seer}/pypi-servers-$VERSION
if [ ! -f "$VENV/.complete" ]; then
  rm -rf "$VENV"
  mkdir -p "$(dirname "$VENV")"
  python3 -m venv "$VENV"
  pins=$(mktemp)
  # `pip freeze` of the venv the suites were captured with.
  cat >"$pins" <<PINS
mcp-server-git==$VERSION
mcp-server-time==$VERSION
annotated-types==0.8.0
anyio==4.16.0
attrs==26.1.0
cffi==2.1.1
click==8.5.1
cryptography==50.0.2
gitdb==4.0.12
GitPython==3.2.1
h11==0.16.0
httpcore2==2.16.2
httpx2==2.16.2
idna==3.20
jsonschema==4.26.0
jsonschema-specifications==2025.9.1
mcp==2.3.0
mcp-types==2.3.0
opentelemetry-api==1.45.2
pycparser==3.12
pydantic==2.14.4
pydantic_core==2.50.5
PyJWT==2.15.1
python-multipart==0.0.34
referencing==0.37.0
rpds-py==2026.9.1
smmap==5.0.3
sse-starlette==3.7.0
starlette==1.10.0
truststore==0.10.5
typing-inspection==0.4.5
typing_extensions==4.16.0
tzdata==2026.6
tzlocal==5.4.5
uvicorn==0.54.0
PINS
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$pins" >&2
  rm -f "$pins"
  touch "$VENV/.complete"
fi
echo "$VENV"
