"""The real MCP Python SDK client (`mcp` 2.x, `mcp.Client`) against a server: list its tools and
call one, with assertions. `.ci/mcp-conformance.sh` runs it against `agent-seer serve` over stdio
and streamable HTTP, in each protocol era the SDK speaks.

    python python_client.py --mode legacy|auto|2026-07-28 \
        [--tools FILE.tools.json] [--harness SUITE.yaml --scenario ID [--turn N --step N]] \
        (--url URL | -- COMMAND ARGS...)

--tools: the names `tools/list` returns must equal the names in this file, in order.
--harness/--scenario: call the tool of that workflow step with the step's own arguments; the
result (content, structuredContent, isError) must equal the step's mock_output.
Without them it lists the tools and calls nothing. Prints one JSON summary line; exits 1 on a
mismatch. Run it only inside a loopback-only network namespace.
"""

import argparse
import asyncio
import json
import sys

import yaml
from mcp import Client, StdioServerParameters


def step_of(harness: str, scenario: str, turn: int, step: int) -> dict:
    with open(harness, encoding="utf-8") as f:
        doc = yaml.safe_load(f)
    for sc in doc["scenarios"]:
        if sc["id"] == scenario:
            s = sc["turns"][turn]["workflow"][step]
            if "tool" not in s:
                sys.exit(f"{harness}: {scenario} turn {turn} step {step} is not a plain tool step")
            return s
    sys.exit(f"{harness}: no scenario {scenario!r}")


def comparable(result: dict) -> dict:
    """The fields a mock output fixes (a 2026-07-28 result also carries resultType, _meta)."""
    return {
        "content": result.get("content", []),
        "structuredContent": result.get("structuredContent"),
        "isError": bool(result.get("isError", False)),
    }


async def run(args: argparse.Namespace) -> int:
    if args.url:
        target = args.url
    else:
        if not args.command:
            sys.exit("give --url URL or -- COMMAND ...")
        target = StdioServerParameters(command=args.command[0], args=args.command[1:])
    failures: list[str] = []
    summary: dict = {"target": args.url or " ".join(args.command), "mode": args.mode}
    async with Client(target, mode=args.mode, read_timeout_seconds=30) as client:
        summary["protocolVersion"] = client.protocol_version
        info = client.server_info
        summary["server"] = info.name if info else None
        tools = []
        cursor = None
        while True:
            page = await client.list_tools(cursor=cursor) if cursor else await client.list_tools()
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        names = [t.name for t in tools]
        summary["tools"] = names
        if args.tools:
            with open(args.tools, encoding="utf-8") as f:
                want = [t["name"] for t in json.load(f)]
            if names != want:
                failures.append(f"tools/list names {names} != {args.tools} names {want}")
        if args.harness:
            s = step_of(args.harness, args.scenario, args.turn, args.step)
            result = await client.call_tool(s["tool"], s.get("arguments") or {})
            got = comparable(result.model_dump(mode="json", by_alias=True, exclude_none=True))
            want_out = comparable(s["mock_output"])
            summary["call"] = {"tool": s["tool"], "arguments": s.get("arguments") or {}, "equal": got == want_out}
            if got != want_out:
                failures.append(
                    f"tools/call {s['tool']} answered {json.dumps(got, sort_keys=True)}, "
                    f"the harness step's mock_output is {json.dumps(want_out, sort_keys=True)}"
                )
    if args.expect_protocol and summary["protocolVersion"] != args.expect_protocol:
        failures.append(f"negotiated protocol {summary['protocolVersion']}, expected {args.expect_protocol}")
    summary["ok"] = not failures
    print(json.dumps(summary))
    for f in failures:
        print(f"python_client: FAIL: {f}", file=sys.stderr)
    return 1 if failures else 0


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--url")
    p.add_argument("--mode", default="auto", help="legacy, auto, or 2026-07-28")
    p.add_argument("--expect-protocol", help="the protocol version the session must end up on")
    p.add_argument("--tools")
    p.add_argument("--harness")
    p.add_argument("--scenario")
    p.add_argument("--turn", type=int, default=0)
    p.add_argument("--step", type=int, default=0)
    p.add_argument("command", nargs=argparse.REMAINDER)
    args = p.parse_args()
    if args.command and args.command[0] == "--":
        args.command = args.command[1:]
    if args.harness and not args.scenario:
        p.error("--harness needs --scenario")
    try:
        code = asyncio.run(run(args))
    except BaseException as e:  # an ExceptionGroup from the SDK's task groups: say the leaf
        while isinstance(e, BaseExceptionGroup) and e.exceptions:
            e = e.exceptions[0]
        print(f"python_client: FAIL: {type(e).__name__}: {str(e)[:2000]}", file=sys.stderr)
        code = 1
    sys.exit(code)


if __name__ == "__main__":
    main()
