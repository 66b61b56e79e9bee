"""RUNS runs of PER traces each, as OTLP JSON Lines (one chat span a trace, the OTel GenAI
conventions' `gen_ai.input.messages` / `gen_ai.output.messages`), no conversation id: each run
is found by its history, every trace's input repeating the run so far. A run asks one tool
PER - 1 times, then answers. Usage: traces.py RUNS PER OUT."""
import json, sys
runs, per = int(sys.argv[1]), int(sys.argv[2])
out = open(sys.argv[3], "w")
def attr(k, v): return {"key": k, "value": {"stringValue": json.dumps(v)}}
n = 0
for r in range(runs):
    hist = [{"role": "user", "parts": [{"type": "text", "content": f"Run {r}: what time is it in London?"}]}]
    for k in range(per):
        n += 1
        if k < per - 1:
            output = [{"role": "assistant", "parts": [{"type": "tool_call", "id": f"c{r}-{k}", "name": "get_current_time", "arguments": {"timezone": "Europe/London"}}]}]
        else:
            output = [{"role": "assistant", "parts": [{"type": "text", "content": "It is 17:24."}]}]
        span = {"traceId": "%032x" % n, "spanId": "%016x" % n, "name": "chat gpt-4.1",
                "startTimeUnixNano": str(1796156450000000000 + n * 1000),
                "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
                               attr("gen_ai.input.messages", hist), attr("gen_ai.output.messages", output)]}
        out.write(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}) + "\n")
        if k < per - 1:
            hist = hist + output + [{"role": "tool", "parts": [{"type": "tool_call_response", "id": f"c{r}-{k}", "response": "17:24"}]}]
