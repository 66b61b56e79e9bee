"""Assertions on what an MCP client printed, against a harness (used by .ci/mcp-conformance.sh
for the MCP Inspector CLIs, whose output is JSON on stdout).

    harness_step.py tool      HARNESS SCENARIO            # the step's tool name
    harness_step.py args-json HARNESS SCENARIO            # its arguments, one JSON object
    harness_step.py args-kv   HARNESS SCENARIO            # its arguments, key=<JSON value> lines
    harness_step.py tools     OUTPUT.json TOOLS.json      # tools/list names == TOOLS.json names
    harness_step.py call      OUTPUT.json HARNESS SCENARIO  # tools/call result == the mock_output

OUTPUT.json is the client's stdout: a result, or `{"result": ...}` (inspector 2.x --format json).
The step is the first of the scenario's first turn. Exit 1, with the difference on stderr, on
a mismatch.
"""

import json
import sys

import yaml


def step(harness: str, scenario: str) -> dict:
    with open(harness, encoding="utf-8") as f:
        doc = yaml.safe_load(f)
    for sc in doc["scenarios"]:
        if sc["id"] == scenario:
            return sc["turns"][0]["workflow"][0]
    sys.exit(f"{harness}: no scenario {scenario!r}")


def output(path: str) -> dict:
    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        doc = json.loads(text)
    except json.JSONDecodeError:
        sys.exit(f"{path}: not JSON: {text[:500]!r}")
    if isinstance(doc, dict) and set(doc) == {"result"}:
        doc = doc["result"]
    return doc


def comparable(result: dict) -> dict:
    return {
        "content": result.get("content", []),
        "structuredContent": result.get("structuredContent"),
        "isError": bool(result.get("isError", False)),
    }


def main() -> int:
    verb, *rest = sys.argv[1:]
    if verb == "tool":
        print(step(*rest)["tool"])
    elif verb == "args-json":
        print(json.dumps(step(*rest).get("arguments") or {}))
    elif verb == "args-kv":
        for k, v in (step(*rest).get("arguments") or {}).items():
            print(f"{k}={json.dumps(v)}")
    elif verb == "tools":
        got = [t["name"] for t in output(rest[0]).get("tools", [])]
        with open(rest[1], encoding="utf-8") as f:
            want = [t["name"] for t in json.load(f)]
        if got != want:
            print(f"tools/list names {got} != {rest[1]} names {want}", file=sys.stderr)
            return 1
    elif verb == "call":
        got = comparable(output(rest[0]))
        want = comparable(step(rest[1], rest[2])["mock_output"])
        if got != want:
            print(
                f"tools/call answered {json.dumps(got, sort_keys=True)}; "
                f"the harness step's mock_output is {json.dumps(want, sort_keys=True)}",
                file=sys.stderr,
            )
            return 1
    else:
        sys.exit(f"unknown verb {verb!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
