"""`python -m orchestra_adapters.mcp --connect SOCKET`: the stdio MCP proxy a CLI agent starts.

It forwards every request to the ToolHost listening on SOCKET (token in ORCHESTRA_MCP_TOKEN). Imports only
the standard library and `mcp`, so the agent is not kept waiting; logs go to stderr, stdout is the protocol.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence

from orchestra_adapters.mcp.server import TOKEN_ENV, RemoteToolSource, serve_stdio


def main(argv: Sequence[str] | None = None) -> int:
    """Serve until the agent closes stdin; exit status 2 on bad arguments or a missing token."""
    parser = argparse.ArgumentParser(
        prog="python -m orchestra_adapters.mcp",
        description="Stdio MCP server forwarding to an Orchestra tool host (token in $ORCHESTRA_MCP_TOKEN).",
    )
    parser.add_argument("--connect", required=True, metavar="SOCKET", help="the tool host's Unix socket")
    parser.add_argument("--name", default="orchestra", help="the server name reported to the client")
    args = parser.parse_args(argv)
    token = os.environ.pop(TOKEN_ENV, "")
    if not token:
        print(f"orchestra mcp: error: {TOKEN_ENV} is not set (the tool host's token)", file=sys.stderr)
        return 2
    return run_proxy(args.connect, token, name=args.name)


def run_proxy(address: str, token: str, *, name: str = "orchestra") -> int:
    """Serve the tool host at `address` over stdio; returns the exit status."""
    import anyio

    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="orchestra mcp: %(message)s")
    source = RemoteToolSource(address, token)
    try:
        anyio.run(lambda: serve_stdio(source, name=name))
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
