#!/usr/bin/env bash
# End-to-end tests against a real model: llama-server + SmolLM2-135M on loopback, inside a
# network namespace that has only loopback, telemetry off. The tests are built before (they
# need the registry); inside the namespace cargo runs --offline.
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE=$(bash .ci/llm-server.sh)
cargo test --no-run --test llm -q
exec unshare -n bash -euo pipefail -c '
  ip link set lo up
  export OTEL_SDK_DISABLED=true
  "$0/bin/llama-server" -m "$0/SmolLM2-135M-Instruct.Q4_1.gguf" \
    --host 127.0.0.1 --port 18081 -c 16384 -np 1 -t 2 --no-webui > /tmp/agent-seer-llama.log 2>&1 &
  server=$!
  trap "kill $server 2>/dev/null || true" EXIT
  for _ in $(seq 1 300); do
    if curl -sf http://127.0.0.1:18081/health >/dev/null; then break; fi
    if ! kill -0 $server 2>/dev/null; then echo "llama-server exited:"; tail -20 /tmp/agent-seer-llama.log; exit 1; fi
    sleep 0.2
  done
  AGENT_SEER_LOCAL_LLM=http://127.0.0.1:18081/v1 cargo test --offline --test llm -- --ignored --test-threads 1
' "$CACHE"
