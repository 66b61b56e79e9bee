#!/usr/bin/env bash
# Everything the later steps of .ci/run install from the registries (npm and PyPI servers, the
# SDK and evaluator venvs, BFCL's checker), and nothing else: each script below stops after its
# installs when AGENT_SEER_PREPARE=1. .ci/run starts this in the background while the first
# builds run (it is mostly waiting on the network) and waits for it before the first step that
# uses what it installs. The Debian packages were installed before (apt takes one lock).
set -euo pipefail
cd "$(dirname "$0")/.."
export AGENT_SEER_PREPARE=1
bash .ci/bfcl.sh >/dev/null
bash .ci/mcp-e2e.sh
bash .ci/mcp-conformance.sh
bash tests/fixtures/adk/regenerate.sh
bash tests/fixtures/ingest/regenerate.sh
bash tests/fixtures/ingest/regenerate-more.sh
echo "prepare: installed in $SECONDS s"
