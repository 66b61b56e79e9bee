#!/usr/bin/env bash
# A 100 MB OpenTelemetry trace file graded by `agent-seer check`: the time suite's correct run
# as the OTel OpenAI instrumentation recorded it (one GenAI trace) among ~100 MB of other
# services' spans, as a collector's file exporter would hold them, one ExportTraceServiceRequest
# a line. Reports the wall time and peak memory (RSS) of the release binary, for the JSON Lines
# file (streamed a line at a time) and for the same spans as one JSON document (read whole).
set -euo pipefail
cd "$(dirname "$0")/.."
MB=${MB:-100}
PROJECT=$(mktemp -d)
mkdir -p "$PROJECT/harnesses" "$PROJECT/capabilities" "$PROJECT/transcripts/time"
cp harnesses/time.yaml harnesses/time.tools.json "$PROJECT/harnesses/"
cp capabilities/mcp-server-time.yaml "$PROJECT/capabilities/"
python3 - "$PROJECT" "$MB" <<'PY'
import json, sys, random
project, mb = sys.argv[1], int(sys.argv[2])
run = open("tests/fixtures/ingest/otel/latest/correct.traces.otlp.jsonl").read().strip()
rnd = random.Random(7)
def other(i):
    trace = "%032x" % rnd.getrandbits(128)
    spans = [{"traceId": trace, "spanId": "%016x" % rnd.getrandbits(64),
              "parentSpanId": "" if k == 0 else "%016x" % rnd.getrandbits(64),
              "name": "GET /api/items/%d" % (i * 10 + k), "kind": 2,
              "startTimeUnixNano": str(1796156450000000000 + i * 1000 + k),
              "endTimeUnixNano": str(1796156450000000000 + i * 1000 + k + 500),
              "attributes": [{"key": "http.request.method", "value": {"stringValue": "GET"}},
                             {"key": "url.path", "value": {"stringValue": "/api/items/%d" % k}},
                             {"key": "http.response.status_code", "value": {"intValue": "200"}},
                             {"key": "user_agent.original", "value": {"stringValue": "x" * 200}}]}
             for k in range(40)]
    return json.dumps({"resourceSpans": [{"resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "shop"}}]},
                                           "scopeSpans": [{"scope": {"name": "http"}, "spans": spans}]}]})
lines, size, i = [], 0, 0
while size < mb * 1_000_000:
    l = other(i); lines.append(l); size += len(l) + 1; i += 1
    if i == len(lines) // 2 + 1 and i > 100 and run not in lines:
        pass
lines.insert(len(lines) // 2, run)
with open(f"{project}/transcripts/time/big.jsonl", "w") as f:
    f.write("\n".join(lines) + "\n")
# The same spans as one document (the protobuf-JSON mapping's shape: one request).
docs = [json.loads(l) for l in lines]
with open(f"{project}/one.json", "w") as f:
    json.dump({"resourceSpans": [rs for d in docs for rs in d["resourceSpans"]]}, f)
open(f"{project}/transcripts/time/big.label.yaml", "w").write("scenario: meeting-conversion\nexpect: pass\n")
print(f"{size / 1e6:.0f} MB in {len(lines)} lines")
PY
bash bench/bin.sh --release
BIN=$PWD/target/release/agent-seer
cd "$PROJECT"
/usr/bin/time -f "JSON Lines, streamed: %e s wall, %M KiB peak RSS" "$BIN" check --quiet --no-save 2>&1 | tail -2
mv transcripts/time/big.jsonl big.jsonl.off
mv one.json transcripts/time/big.json
/usr/bin/time -f "one JSON document, read whole: %e s wall, %M KiB peak RSS" "$BIN" check --quiet --no-save 2>&1 | tail -2
cd / && rm -rf "$PROJECT"
