"""A small MCP server on the real MCP Python SDK (`mcp` 2.x, `MCPServer`, formerly FastMCP),
the second real server `inspect --url` is compared with over stdio (`.ci/mcp-conformance.sh`).

    python python_server.py                      # stdio
    python python_server.py --http 127.0.0.1:PORT # streamable HTTP at /mcp (both eras)

Run it only inside a loopback-only network namespace, as the CI script does.
"""

import argparse

from mcp.server.mcpserver import MCPServer

server = MCPServer("agent-seer-conformance-python")


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", metavar="HOST:PORT", help="serve streamable HTTP at /mcp instead of stdio")
    args = parser.parse_args()
    if args.http:
        host, _, port = args.http.rpartition(":")
        server.run(transport="streamable-http", host=host, port=int(port))
    else:
        server.run()


if __name__ == "__main__":
    main()
