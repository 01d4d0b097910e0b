"""Talking to an MCP server started as a real subprocess over stdio, with the `mcp` package's client."""

from __future__ import annotations

import os
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.support.orchestra_project import ORCHESTRA

T = TypeVar("T")


def server_params(
    command: str, args: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> StdioServerParameters:
    """How to start the server: our whole (hermetic) environment plus `env`."""
    return StdioServerParameters(
        command=command, args=list(args), env={**os.environ, **(env or {})}, cwd=str(cwd) if cwd else None
    )


def orchestra_mcp_serve(*args: str | Path, cwd: Path) -> StdioServerParameters:
    """`orchestra mcp serve ARGS` run in `cwd`."""
    return server_params(str(ORCHESTRA), ["mcp", "serve", *map(str, args)], cwd=cwd)


def with_client(
    params: StdioServerParameters,
    body: Callable[[Client], Awaitable[T]],
    *,
    stderr: Path | None = None,
    timeout: float = 60,
) -> T:
    """Start the server, run `body` with a connected client, stop the server; its stderr goes to `stderr`."""

    async def main() -> T:
        with anyio.fail_after(timeout):
            if stderr is None:
                async with Client(params) as client:
                    return await body(client)
            with stderr.open("a", encoding="utf-8") as errlog:
                async with Client(stdio_client(params, errlog=errlog)) as client:
                    return await body(client)

    return anyio.run(main)


def text_of(result: Any) -> str:
    """The text of a tool result (one text block)."""
    return "".join(block.text for block in result.content if getattr(block, "type", "") == "text")


async def list_names(client: Client) -> list[str]:
    return [tool.name for tool in (await client.list_tools()).tools]


async def call(client: Client, name: str, **arguments: Any) -> tuple[str, bool]:
    """Call a tool: its text and whether it is an error result."""
    result = await client.call_tool(name, arguments)
    return text_of(result), bool(result.is_error)


PYTHON = sys.executable
