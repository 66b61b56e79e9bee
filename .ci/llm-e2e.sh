#!/usr/bin/env bash
# End-to-end tests against a real model: llama-server on loopback, inside a network namespace
# that has only loopback, telemetry off. The tests are built before (they need the registry);
# inside the namespace cargo runs --offline.
#
# AGENT_SEER_E2E_MODEL picks the model: `smollm2` (SmolLM2-135M-Instruct, the default: the
# four tests in ~1 min) or `qwen` (Qwen2.5-Coder-1.5B-Instruct Q4_K_M, a 1.1 GB download
# once; see BENCHMARKS.md "A real 1.5B model" for its timings and why CI keeps SmolLM2 here).
set -euo pipefail
cd "$(dirname "$0")/.."
case ${AGENT_SEER_E2E_MODEL:-smollm2} in
  smollm2) which=smollm2 model=SmolLM2-135M-Instruct.Q4_1.gguf ctx=16384 ;;
  qwen) which=qwen model=Qwen2.5-Coder-1.5B-Instruct.Q4_K_M.gguf ctx=16384 ;;
  *) echo "AGENT_SEER_E2E_MODEL must be smollm2 or qwen" >&2; exit 2 ;;
esac
CACHE=$(bash .ci/llm-server.sh "$which")
cargo test --no-run --test llm -q
exec unshare -n bash -euo pipefail -c '
  ip link set lo up
  export OTEL_SDK_DISABLED=true
  start=$(date +%s%N)
  "$0/bin/llama-server" -m "$0/$1" \
    --host 127.0.0.1 --port 18081 -c "$2" -np 1 -t 2 --no-webui > /tmp/agent-seer-llama.log 2>&1 &
  server=$!
  trap "kill $server 2>/dev/null || true" EXIT
  for _ in $(seq 1 300); do
    if curl -sf http://127.0.0.1:18081/health >/dev/null; then break; fi
    if ! kill -0 $server 2>/dev/null; then echo "llama-server exited:"; tail -20 /tmp/agent-seer-llama.log; exit 1; fi
    sleep 0.2
  done
  echo "llama-server ($1) ready in $(( ($(date +%s%N) - start) / 1000000 )) ms"
  AGENT_SEER_LOCAL_LLM=http://127.0.0.1:18081/v1 cargo test --offline --test llm -- --ignored --test-threads 1
' "$CACHE" "$model" "$ctx"
