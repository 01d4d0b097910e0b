"""Where the MCP server's tools come from: a Toolbox in this process, or a ToolHost reached over its socket
(with timeouts, so a dead or hung host never hangs the agent)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from orchestra_adapters.mcp.server import (
    DEFAULT_CALL_TIMEOUT_S,
    LocalToolSource,
    RemoteToolSource,
    ToolSourceError,
    call_timeout_from_env,
    mcp_tool,
)
from orchestra_adapters.mcp.tool_host import ToolHost
from orchestra_adapters.tools.toolbox import Toolbox
from orchestra_core.agents.tools import AgentTool


def echo(text: str) -> str:
    """Say it back.

    Args:
        text: What to say.
    """
    return text


TOOLBOX_TOOLS = [AgentTool(name="project:echo", description="Echo.", func=echo)]


@pytest.fixture
def listener(tmp_path: Path) -> Iterator[tuple[str, list[socket.socket]]]:
    """A Unix socket that accepts connections and never answers (a hung host)."""
    address = str(tmp_path / "hung.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(address)
    server.listen(8)
    accepted: list[socket.socket] = []

    def accept() -> None:
        try:
            while True:
                accepted.append(server.accept()[0])
        except OSError:
            return

    threading.Thread(target=accept, daemon=True).start()
    yield address, accepted
    server.close()
    for connection in accepted:
        connection.close()


def test_no_host_makes_calls_error_results_and_the_list_an_error(tmp_path: Path) -> None:
    source = RemoteToolSource(str(tmp_path / "nobody.sock"), "token")

    text, is_error = source.call_tool("project__echo", {"text": "hi"})

    assert is_error and text.startswith("Error: Orchestra's tool host is gone")
    with pytest.raises(ToolSourceError, match="Orchestra's tool host is gone"):
        source.list_tools()


def test_a_host_that_never_answers_times_out(listener: tuple[str, list[socket.socket]]) -> None:
    source = RemoteToolSource(listener[0], "token", call_timeout=0.3)

    started = time.monotonic()
    text, is_error = source.call_tool("project__echo", {"text": "hi"})

    assert is_error and text == "Error: Orchestra's tool host is gone: no answer within 0.3 s"
    assert time.monotonic() - started < 5


def test_a_host_that_answers_nonsense_is_an_error(listener: tuple[str, list[socket.socket]]) -> None:
    address, accepted = listener
    source = RemoteToolSource(address, "token", call_timeout=5)

    def answer_nonsense() -> None:
        deadline = time.monotonic() + 5
        while not accepted and time.monotonic() < deadline:
            time.sleep(0.01)
        accepted[0].sendall(b"[1, 2]\n")

    threading.Thread(target=answer_nonsense, daemon=True).start()
    text, is_error = source.call_tool("project__echo", {"text": "hi"})

    assert is_error and text == "Error: Orchestra's tool host is gone: it sent an unreadable answer"


def test_the_tool_list_is_fetched_once() -> None:
    with ToolHost(Toolbox(TOOLBOX_TOOLS)) as host:
        source = RemoteToolSource(host.address, host.token)
        first = source.list_tools()
        assert source.call_tool("project__echo", {"text": "hi"}) == ("hi", False)

    assert source.list_tools() == first  # the host is gone; the list it gave still stands
    assert [tool["name"] for tool in first] == ["project__echo", "report_outcome"]
    assert source.call_tool("project__echo", {"text": "hi"})[1]


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, DEFAULT_CALL_TIMEOUT_S), ("", DEFAULT_CALL_TIMEOUT_S), ("90", 90.0), ("2.5", 2.5),
     ("soon", DEFAULT_CALL_TIMEOUT_S), ("-1", DEFAULT_CALL_TIMEOUT_S), ("0", DEFAULT_CALL_TIMEOUT_S),
     ("inf", DEFAULT_CALL_TIMEOUT_S), ("nan", DEFAULT_CALL_TIMEOUT_S)],
)
def test_the_call_timeout_comes_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, value: str | None, expected: float
) -> None:
    if value is None:
        monkeypatch.delenv("ORCHESTRA_MCP_CALL_TIMEOUT", raising=False)
    else:
        monkeypatch.setenv("ORCHESTRA_MCP_CALL_TIMEOUT", value)

    assert call_timeout_from_env() == expected


def test_a_function_definition_becomes_an_mcp_tool() -> None:
    definition = {"type": "function", "function": {"name": "a__b", "description": "D.", "parameters": {}}}

    assert mcp_tool(definition) == {"name": "a__b", "description": "D.", "inputSchema": {"type": "object"}}


def test_a_local_source_can_leave_report_outcome_out() -> None:
    source = LocalToolSource(Toolbox(TOOLBOX_TOOLS), report_outcome=False)

    assert [tool["name"] for tool in source.list_tools()] == ["project__echo"]
    text, is_error = source.call_tool("report_outcome", {"status": "success"})
    assert is_error and text == "Error: unknown tool 'report_outcome'; available tools: project__echo"
    assert source.reported_outcome is None
    assert source.calls()[0].record.error is not None


def test_a_local_source_reports_each_call_and_survives_a_broken_toolbox() -> None:
    seen: list[str] = []
    source = LocalToolSource(Toolbox(TOOLBOX_TOOLS), on_call=lambda executed: seen.append(executed.text))

    assert source.call_tool("project__echo", {"text": "one"}) == ("one", False)
    assert seen == ["one"]

    class Broken(Toolbox):
        def execute(self, safe_name: str, args: Any, call_id: str) -> Any:
            raise RuntimeError("toolbox bug")

    broken = LocalToolSource(Broken(TOOLBOX_TOOLS))
    assert broken.call_tool("project__echo", {"text": "two"}) == ("Error: RuntimeError: toolbox bug", True)
