#!/usr/bin/env bash
# The judge, the generator and the agent runner measured on a real 1.5B model (issue 21):
# Qwen2.5-Coder-1.5B-Instruct Q4_K_M (.ci/llm-server.sh qwen) in llama-server, inside a
# loopback-only network namespace, telemetry off, every model process under `nice` (QUALITY_NICE, QUALITY_CPUS).
# Writes its figures, each with its command and wall time, into bench/llm-quality.md (the
# section between the llm-quality markers). Runs outside `cargo test`; statistics in bench/llm_quality.py.
#
#   bash bench/llm-quality.sh
#
# Environment (defaults in brackets):
#   QUALITY_JUDGE     transcripts the judge scores, both modes ["transcripts/veo/a0-correct.yaml
#                     transcripts/veo/a1-wrong-model-audio.yaml transcripts/nanobanana/nb0-correct.yaml
#                     transcripts/nanobanana/nb1-size-on-flash25.yaml transcripts/narrative/np2-capability.yaml"]
#                     ("all" = every shipped suite: ~140 transcripts, hours on 2 cores)
#   QUALITY_MODES     [enriched raw-spec]
#   QUALITY_RUN       harnesses run with the model as the agent under test [harnesses/lyria.yaml]
#   QUALITY_REPEAT    runs per scenario, for pass^k / pass@k [2]
#   QUALITY_STEPS     rounds of tool calls per turn [3]
#   QUALITY_GENERATE  tool specs to generate from, `suite=spec` [tiny=<two-tool spec written here>]
#   QUALITY_GEN_ARGS  generate's sizes ["--rounds 1 --simple 1 --complex 1"]
#   QUALITY_MERGE     results folders of earlier runs whose figures the section keeps [none]
#   QUALITY_THREADS   llama-server threads [2; 1 is faster when the machine is shared]
#   QUALITY_CPUS      pin llama-server to these CPUs (`taskset -c`, e.g. 1) [not pinned]
#   QUALITY_NICE      the model server's and agent-seer's nice level [19]
#   QUALITY_CACHE     the LLM answer cache [a fresh folder under the results; never the repo's
#                     .agent-seer/llm-cache]: an answer found there is not asked again (the
#                     ledger in each figure counts such answers as cached)
#   AGENT_SEER_BIN    the agent-seer binary [built: cargo build --release]
#   QUALITY_NO_WRITE  set: leave bench/llm-quality.md alone
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
CACHE=$(bash .ci/llm-server.sh qwen)
if [[ -z ${AGENT_SEER_BIN:-} ]]; then
  bash bench/bin.sh --release
  AGENT_SEER_BIN=$PWD/target/release/agent-seer
fi
OUT=$(mktemp -d /tmp/agent-seer-llm-quality.XXXXXX)
export OUT AGENT_SEER_BIN CACHE
export QUALITY_JUDGE=${QUALITY_JUDGE:-"transcripts/veo/a0-correct.yaml transcripts/veo/a1-wrong-model-audio.yaml transcripts/nanobanana/nb0-correct.yaml transcripts/nanobanana/nb1-size-on-flash25.yaml transcripts/narrative/np2-capability.yaml"}
export QUALITY_MODES=${QUALITY_MODES:-"enriched raw-spec"}
export QUALITY_RUN=${QUALITY_RUN-harnesses/lyria.yaml}
export QUALITY_REPEAT=${QUALITY_REPEAT:-2}
export QUALITY_STEPS=${QUALITY_STEPS:-3}
export QUALITY_GENERATE=${QUALITY_GENERATE-tiny=$OUT/tiny.tools.json}
export QUALITY_GEN_ARGS=${QUALITY_GEN_ARGS:-"--rounds 1 --simple 1 --complex 1"}
export QUALITY_THREADS=${QUALITY_THREADS:-2} QUALITY_CACHE=${QUALITY_CACHE:-}
export QUALITY_CPUS=${QUALITY_CPUS:-} QUALITY_NICE=${QUALITY_NICE:-19}
[[ $QUALITY_JUDGE == all ]] && QUALITY_JUDGE=""
cat >"$OUT/tiny.tools.json" <<'JSON'
[{"name": "get_weather", "description": "Current weather for a city.", "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
 {"name": "send_email", "description": "Send an email.", "inputSchema": {"type": "object", "properties": {"to": {"type": "string"}, "body": {"type": "string"}}, "required": ["to", "body"]}}]
JSON
echo "llm-quality: results in $OUT" >&2

unshare -n bash -euo pipefail -c '
  ip link set lo up
  export OTEL_SDK_DISABLED=true
  py() { python3 bench/llm_quality.py "$@"; }
  step() {  # step WHAT FIGURE COMMAND WALL_S
    python3 -c "import json,sys; print(json.dumps(dict(what=sys.argv[1], figure=sys.argv[2], command=sys.argv[3], wall_s=float(sys.argv[4]))))" "$@" >>"$OUT/steps.jsonl"
  }
  now() { date +%s.%N; }
  since() { python3 -c "import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 1))" "$1" "$(now)"; }
  args="-c 16384 -np 1 -t $QUALITY_THREADS --no-webui"
  t0=$(now)
  pin=()
  [[ -n $QUALITY_CPUS ]] && pin=(taskset -c "$QUALITY_CPUS")
  nice -n "$QUALITY_NICE" "${pin[@]}" "$CACHE/bin/llama-server" -m "$CACHE/Qwen2.5-Coder-1.5B-Instruct.Q4_K_M.gguf" \
    --host 127.0.0.1 --port 18081 $args >"$OUT/llama.log" 2>&1 &
  server=$!
  trap "kill $server 2>/dev/null || true" EXIT
  for _ in $(seq 1 1200); do
    if curl -sf http://127.0.0.1:18081/health >/dev/null; then break; fi
    if ! kill -0 $server 2>/dev/null; then echo "llama-server exited:"; tail -20 "$OUT/llama.log"; exit 1; fi
    sleep 0.1
  done
  ready=$(since "$t0")
  rss=$(ps -o rss= -p $server)
  step "llama-server + Qwen 1.5B: start to /health OK, RSS after load" "${ready} s, $((rss / 1024)) MB" "llama-server -m Qwen2.5-Coder-1.5B-Instruct.Q4_K_M.gguf $args" "$ready"
  python3 - "$OUT" "$(uptime | sed "s/.*load average: //")" "$args${QUALITY_CPUS:+, pinned to CPU $QUALITY_CPUS}, nice $QUALITY_NICE" "$QUALITY_JUDGE" "$QUALITY_MODES" "$QUALITY_GENERATE $QUALITY_GEN_ARGS" "$QUALITY_RUN --repeat $QUALITY_REPEAT --steps $QUALITY_STEPS" <<PY
import json, sys, datetime
out, load, args, subset, modes, gen, runs = sys.argv[1:8]
gen = "" if not gen.split("=")[0].strip() or gen.startswith(" ") else gen
runs = "" if runs.startswith(" ") else runs
json.dump({"date": datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC"), "load": load,
           "server_args": "-t/-c/-np: " + args, "subset": ("judge: " + (subset or "every shipped suite") + "; generate: " + (gen or "none") + "; run: " + (runs or "none")) if modes != "none" else ("no judge; generate: " + (gen or "none") + "; run: " + (runs or "none"))},
          open(out + "/meta.json", "w"))
PY
  export AGENT_SEER_OPENAI_BASE_URL=http://127.0.0.1:18081/v1
  export AGENT_SEER_LLM_CACHE=${QUALITY_CACHE:-$OUT/llm-cache} AGENT_SEER_LLM_TIMEOUT_SECS=1800 AGENT_SEER_LLM_CONCURRENCY=1
  unset AGENT_SEER_LLM AGENT_SEER_JUDGE OPENAI_API_KEY
  model=openai:qwen2.5-coder-1.5b

  # 1. The model as the agent under test: pass^k and pass@k.
  for h in $QUALITY_RUN; do
    t=$(now)
    nice -n "$QUALITY_NICE" "$AGENT_SEER_BIN" run "$h" --agent $model --repeat "$QUALITY_REPEAT" --steps "$QUALITY_STEPS" \
      -o "$OUT/run-$(basename "$h" .yaml)" --format json >"$OUT/run-$(basename "$h" .yaml).json" 2>"$OUT/run-$(basename "$h" .yaml).err" || true
    w=$(since "$t")
    fig=$(python3 bench/llm_quality.py run "$OUT/run-$(basename "$h" .yaml).json" || echo "(bench/llm_quality.py failed on this report)")
    step "agent under test through $h, $QUALITY_REPEAT runs per scenario, --steps $QUALITY_STEPS" "$fig" \
      "agent-seer run $h --agent $model --repeat $QUALITY_REPEAT --steps $QUALITY_STEPS" "$w"
  done
  # 2. The judge against the oracle and the labels, enriched and raw-spec prompts.
  if [[ -n ${QUALITY_JUDGE+x} && ${QUALITY_MODES} != none ]]; then
    "$AGENT_SEER_BIN" check --no-save --format json $QUALITY_JUDGE >"$OUT/check.json" || true
    for mode in $QUALITY_MODES; do
      t=$(now)
      cmd="agent-seer judge --judge $model --mode $mode --format json ${QUALITY_JUDGE:-(every suite)}"
      nice -n "$QUALITY_NICE" "$AGENT_SEER_BIN" judge --judge $model --mode $mode --format json $QUALITY_JUDGE \
        >"$OUT/judge-$mode.json" 2>"$OUT/judge-$mode.err" || true
      w=$(since "$t")
      py judge "$OUT/check.json" "$OUT/judge-$mode.json" --label "$mode" >"$OUT/judge-$mode.stats.json" || echo "{\"figure\": \"(bench/llm_quality.py failed on this output)\"}" >"$OUT/judge-$mode.stats.json"
      fig=$(python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print(s[\"figure\"])" "$OUT/judge-$mode.stats.json")
      step "judge vs oracle, $mode prompts" "$fig" "$cmd" "$w"
    done
  fi

  # 3. Generation from a spec: produced / kept / dropped per stage, coverage, grounding, multi-turn, --verify.
  for g in $QUALITY_GENERATE; do
    suite=${g%%=*} spec=${g#*=}
    spec_tools=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(len(d[\"tools\"] if isinstance(d, dict) else d))" "$spec")
    # Seed outputs beside the capture (X.seed_outputs.json for X.tools.json) ground the mocks.
    seeds=${spec%.tools.json}.seed_outputs.json
    seed_args=()
    [[ -f $seeds ]] && seed_args=(--seed-outputs "$seeds")
    t=$(now)
    nice -n "$QUALITY_NICE" "$AGENT_SEER_BIN" generate --spec "$spec" "${seed_args[@]}" --suite "$suite" --llm $model $QUALITY_GEN_ARGS \
      --verify -o "$OUT/gen-$suite" >"$OUT/gen-$suite.json" 2>"$OUT/gen-$suite.err" || true
    w=$(since "$t")
    fig=$(python3 bench/llm_quality.py generate "$OUT/gen-$suite.json" || echo "(bench/llm_quality.py failed on this report)")
    step "generate, $suite spec ($spec_tools tools), $QUALITY_GEN_ARGS, --verify" "$fig" \
      "agent-seer generate --spec $(basename "$spec") ${seed_args[*]:+--seed-outputs $(basename "$seeds") }--suite $suite --llm $model $QUALITY_GEN_ARGS --verify -o DIR" "$w"
  done

'
python3 - "$OUT" "$(( $(date +%s) - start ))" <<'PY'
import json, sys
p = sys.argv[1] + "/meta.json"
m = json.load(open(p)); m["wall_s"] = float(sys.argv[2]); json.dump(m, open(p, "w"))
PY
if [[ -z ${QUALITY_NO_WRITE:-} ]]; then
  python3 bench/llm_quality.py write ${QUALITY_MERGE:-} "$OUT" bench/llm-quality.md
fi
echo "llm-quality: done in $(( $(date +%s) - start )) s; results in $OUT" >&2
