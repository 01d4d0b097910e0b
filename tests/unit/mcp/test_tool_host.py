"""ToolHost's private wire protocol, spoken with a raw Unix socket: tokens, listing, calls one at a time,
failures as results, the private socket directory and how an agent is told to start the proxy."""

from __future__ import annotations

import json
import socket
import stat
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from orchestra_adapters.mcp.tool_host import ToolHost
from orchestra_adapters.tools.toolbox import Toolbox
from orchestra_core.agents.tools import AgentTool, ToolFailure


def exchange(host: ToolHost, *messages: dict[str, Any]) -> list[dict[str, Any] | None]:
    """Send messages on one connection; each answer, or None once the host has closed it."""
    answers: list[dict[str, Any] | None] = []
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(10)
        sock.connect(host.address)
        reader = sock.makefile("rb")
        for message in messages:
            try:
                sock.sendall(json.dumps(message).encode() + b"\n")
            except BrokenPipeError:
                answers.append(None)
                continue
            line = reader.readline()
            answers.append(json.loads(line) if line else None)
    return answers


def tool(name: str, func: Any, description: str = "A tool.") -> AgentTool:
    return AgentTool(name=name, description=description, func=func)


def echo(text: str) -> str:
    """Say it back.

    Args:
        text: What to say.
    """
    return f"echo: {text}"


@pytest.fixture
def host() -> Iterator[ToolHost]:
    def broken() -> str:
        """Always fails."""
        raise RuntimeError("the tool broke")

    def refuses() -> str:
        """Refuses."""
        return ToolFailure.of("not allowed here")

    with ToolHost(Toolbox([tool("project:echo", echo), tool("project:broken", broken), tool("project:refuses", refuses)])) as host:
        yield host


def test_lists_tools_as_mcp_describes_them(host: ToolHost) -> None:
    [answer] = exchange(host, {"token": host.token, "op": "list"})

    assert answer is not None
    tools = {entry["name"]: entry for entry in answer["tools"]}
    assert list(tools) == ["project__echo", "project__broken", "project__refuses", "report_outcome"]
    assert tools["project__echo"]["description"] == "A tool."
    assert tools["project__echo"]["inputSchema"]["type"] == "object"
    assert tools["project__echo"]["inputSchema"]["properties"]["text"]["description"] == "What to say."


def test_calls_run_and_failures_become_error_results(host: ToolHost) -> None:
    answers = exchange(
        host,
        {"token": host.token, "op": "call", "name": "project__echo", "arguments": {"text": "hi"}},
        {"token": host.token, "op": "call", "name": "project__broken", "arguments": {}},
        {"token": host.token, "op": "call", "name": "project__refuses", "arguments": {}},
        {"token": host.token, "op": "call", "name": "project__echo", "arguments": ["not", "an", "object"]},
        {"token": host.token, "op": "call", "name": 7},
        {"token": host.token, "op": "dance"},
    )

    assert answers[0] == {"text": "echo: hi", "is_error": False}
    assert answers[1] == {"text": "Error: RuntimeError: the tool broke", "is_error": True}
    assert answers[2] == {"text": "Error: not allowed here", "is_error": True}
    assert answers[3] == {"text": "Error: arguments must be a JSON object", "is_error": True}
    assert answers[4] == {"text": "Error: the call names no tool", "is_error": True}
    assert answers[5] == {"error": "unknown op 'dance'"}
    assert [call.record.name for call in host.calls()] == ["project:echo", "project:broken", "project:refuses", "project:echo"]
    assert [call.record.call_id for call in host.calls()] == ["mcp-1", "mcp-2", "mcp-3", "mcp-4"]


@pytest.mark.parametrize("token", ["wrong", "", None, 12, ["x"]])
def test_a_message_without_the_token_closes_the_connection_unanswered(host: ToolHost, token: Any) -> None:
    message = {"op": "call", "name": "project__echo", "arguments": {"text": "hi"}}
    if token is not None:
        message["token"] = token

    assert exchange(host, message, {"token": host.token, "op": "list"}) == [None, None]
    assert host.calls() == []


def test_an_unreadable_line_closes_the_connection(host: ToolHost) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(10)
        sock.connect(host.address)
        sock.sendall(b"this is not json\n")
        assert sock.makefile("rb").readline() == b""
    assert exchange(host, {"token": host.token, "op": "list"})[0] is not None  # the host serves on


def test_calls_run_one_at_a_time() -> None:
    running: list[int] = []
    overlaps: list[int] = []
    lock = threading.Lock()

    def slow(number: int) -> str:
        """Take a while.

        Args:
            number: Which call.
        """
        with lock:
            running.append(number)
            if len(running) > 1:
                overlaps.append(number)
        time.sleep(0.05)
        with lock:
            running.remove(number)
        return str(number)

    with ToolHost(Toolbox([tool("project:slow", slow)])) as host:
        threads = [
            threading.Thread(
                target=exchange,
                args=(host, {"token": host.token, "op": "call", "name": "project__slow", "arguments": {"number": n}}),
            )
            for n in range(6)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        calls = host.calls()

    assert overlaps == []
    assert sorted(call.record.result or "" for call in calls) == [str(n) for n in range(6)]


def test_report_outcome_is_kept_and_tells_the_agent_to_finish(host: ToolHost) -> None:
    [answer] = exchange(
        host, {"token": host.token, "op": "call", "name": "report_outcome", "arguments": {"status": "retry"}}
    )

    assert answer == {
        "text": "Outcome recorded: retry. Now finish: end your reply with a short summary of what you did.",
        "is_error": False,
    }
    assert host.reported_outcome is not None and host.reported_outcome.status.value == "retry"
    assert host.calls()[-1].record.result == answer["text"]


def test_the_socket_lives_in_a_private_directory_removed_on_exit() -> None:
    with ToolHost(Toolbox([])) as host:
        directory = Path(host.address).parent
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700
        assert stat.S_ISSOCK(Path(host.address).stat().st_mode)
        assert len(host.token) >= 40
    assert not directory.exists()


def test_two_hosts_have_their_own_socket_and_token() -> None:
    with ToolHost(Toolbox([])) as one, ToolHost(Toolbox([])) as two:
        assert one.address != two.address and one.token != two.token
        assert exchange(one, {"token": two.token, "op": "list"}) == [None]


def test_server_spec_starts_the_proxy_with_the_token_in_its_environment() -> None:
    with ToolHost(Toolbox([]), server_name="tools") as host:
        spec = host.server_spec()

    assert spec.name == "tools"
    assert spec.command == sys.executable
    assert spec.args == ("-P", "-m", "orchestra_adapters.mcp", "--connect", host.address)
    assert dict(spec.env) == {"ORCHESTRA_MCP_TOKEN": host.token}
    assert host.token not in spec.args


def test_a_tool_without_a_json_schema_fails_when_the_host_is_made() -> None:
    def odd(value: object) -> str:
        """Takes anything."""
        return ""

    class Unschematic:
        pass

    def strange(value: Unschematic) -> str:
        """Takes a class pydantic cannot describe."""
        return ""

    from orchestra_adapters.tools.tool_schemas import ToolSchemaError

    with pytest.raises(ToolSchemaError, match="project:strange"):
        ToolHost(Toolbox([tool("project:odd", odd), tool("project:strange", strange)]))
