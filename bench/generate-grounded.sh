#!/usr/bin/env bash
# Issue 30, item 4: generation with the local Qwen2.5-Coder-1.5B (.ci/llm-server.sh qwen) on real
# servers' specs, before and after grounding. BEFORE is a build without it (the model writes the
# mocks, calls are not held to their tool's input schema, --verify has four faults); NEW
# grounds each scenario's oracle in the real server (`generate … -- SERVER`), decodes each call
# under its tool's input schema and keeps a scenario only when mutate's operators are killed.
# Everything runs in a loopback-only namespace, telemetry off, a fresh answer cache per run.
#
#   BASE=/path/to/old/agent-seer [NEW=target/debug/agent-seer] [SPECS="time memory"] \
#     [GEN_ARGS="--rounds 1 --simple 1 --complex 1"] [OUT=DIR] bash bench/generate-grounded.sh
#
# Prints one line per run (suite, build, kept, coverage, grounding tiers, calls, wall seconds)
# and leaves each run's JSON report in OUT. Without BASE only NEW runs. Slow: a run is minutes
# of CPU on a 2-core machine (bench/llm-quality.md has the figures).
set -euo pipefail
cd "$(dirname "$0")/.."
NEW=${NEW:-target/debug/agent-seer}
BASE=${BASE:-}
SPECS=${SPECS:-"time memory"}
GEN_ARGS=${GEN_ARGS:-"--rounds 1 --simple 1 --complex 1"}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
LLM=$(bash .ci/llm-server.sh qwen | tail -1)
PYPI=$(bash .ci/servers-pypi.sh | tail -1)
NPM=${AGENT_SEER_NPM:-${AGENT_SEER_CACHE:-/var/cache/agent-seer}/npm-2026.8.31}
export NEW BASE SPECS GEN_ARGS OUT LLM PYPI NPM
unshare -n bash -euo pipefail -c '
  ip link set lo up
  export OTEL_SDK_DISABLED=true AGENT_SEER_OPENAI_BASE_URL=http://127.0.0.1:18082/v1
  export AGENT_SEER_LLM_TIMEOUT_SECS=1800 AGENT_SEER_LLM_CONCURRENCY=1
  "$LLM/bin/llama-server" -m "$LLM/Qwen2.5-Coder-1.5B-Instruct.Q4_K_M.gguf" --host 127.0.0.1 \
    --port 18082 -c 16384 -np 1 -t 2 --no-webui >"$OUT/llama.log" 2>&1 &
  server=$!
  trap "kill $server 2>/dev/null || true" EXIT
  for _ in $(seq 1 1200); do
    curl -sf http://127.0.0.1:18082/health >/dev/null && break
    kill -0 $server 2>/dev/null || { tail -20 "$OUT/llama.log"; exit 1; }
    sleep 0.1
  done
  server_of() {
    case $1 in
      time) echo "$PYPI/bin/mcp-server-time --local-timezone UTC" ;;
      memory) echo "env MEMORY_FILE_PATH={scratch}/memory.jsonl node $NPM/node_modules/@modelcontextprotocol/server-memory/dist/index.js" ;;
      git) echo "$PYPI/bin/mcp-server-git --repository {scratch}" ;;
      *) echo "no server known for $1" >&2; exit 2 ;;
    esac
  }
  for suite in $SPECS; do
    for build in base new; do
      bin=$NEW; [[ $build == base ]] && bin=$BASE
      [[ -z $bin ]] && continue
      extra=()
      [[ $build == new ]] && extra=(-- $(server_of "$suite"))
      [[ $build == new && $suite == git ]] && setup=(--setup "git init -q . && git -c user.name=a -c user.email=a@b commit -q --allow-empty -m init") || setup=()
      dir=$OUT/$suite-$build
      rm -rf "$dir"; mkdir -p "$dir"
      t0=$(date +%s)
      AGENT_SEER_LLM_CACHE=$dir/cache "$bin" generate --spec "harnesses/$suite.tools.json" --suite "$suite-gen" \
        --llm openai:qwen2.5-coder-1.5b $GEN_ARGS --verify -o "$dir/out" "${setup[@]}" "${extra[@]}" \
        >"$dir/report.json" 2>"$dir/stderr.txt" || true
      wall=$(( $(date +%s) - t0 ))
      python3 bench/generate_grounded.py "$suite" "$build" "$dir/report.json" "$wall"
    done
  done
'
