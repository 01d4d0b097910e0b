"""A tiny stdio MCP server for the real-CLI smoke tests: `write_file(path, content)` and `read_file(path)` under
the directory given as its one argument (default: the working directory). A failing call (a missing file, a path
outside the root) is a tool error. Run: `python tests/support/echo_mcp_server.py ROOT`. Logs go to stderr only:
stdout is the protocol."""

from __future__ import annotations

import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer

ROOT = Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
server = MCPServer("echo")


def _inside(path: str) -> Path:
    target = (ROOT / path).resolve()
    if not target.is_relative_to(ROOT):
        raise ValueError(f"{path} is outside {ROOT}")
    return target


@server.tool()
def write_file(path: str, content: str) -> str:
    """Write `content` to the file at `path` (relative to the server's root)."""
    target = _inside(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(content, encoding="utf-8")
    print(f"echo_mcp_server: wrote {path}", file=sys.stderr)
    return f"wrote {len(content)} characters to {path}"


@server.tool()
def read_file(path: str) -> str:
    """The text of the file at `path` (relative to the server's root)."""
    return _inside(path).read_text(encoding="utf-8")


if __name__ == "__main__":
    server.run("stdio")
