"""The fake provider APIs drive the real, pinned `claude` and `codex` CLIs offline: a text reply comes back in
their JSON output, and a scripted MCP tool call reaches a stdio MCP server (tests/support/echo_mcp_server.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli_agents import (
    FAKE_MODEL,
    claude_binary,
    claude_env,
    codex_binary,
    codex_env,
    codex_provider_args,
)
from tests.support.fake_provider_api import FakeAnthropicAPI, FakeOpenAIResponsesAPI, Reply, ToolUse

ECHO_SERVER = Path(__file__).resolve().parents[2] / "support" / "echo_mcp_server.py"
TIMEOUT = 60


def _lines(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def _run(cmd: list[str], env: dict[str, str], cwd: Path, prompt: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        cmd, input=prompt, capture_output=True, text=True, env=env, cwd=cwd, timeout=TIMEOUT
    )
    assert done.returncode == 0, f"exit {done.returncode}\nstdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    return done


def _claude(api: FakeAnthropicAPI, tmp_path: Path, *extra: str) -> list[dict[str, Any]]:
    cmd = [
        str(claude_binary()),
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        "--model",
        FAKE_MODEL,
        *extra,
    ]
    return _lines(_run(cmd, claude_env(api.base_url, tmp_path / "home"), tmp_path, "Say hello.").stdout)


def _codex(api: FakeOpenAIResponsesAPI, tmp_path: Path, *extra: str) -> list[dict[str, Any]]:
    cmd = [
        str(codex_binary()),
        "exec",
        "--json",
        "--skip-git-repo-check",
        "-C",
        str(tmp_path),
        *codex_provider_args(api.base_url),
        *extra,
        "-",
    ]
    return _lines(_run(cmd, codex_env(api.base_url, tmp_path / "home"), tmp_path, "Say hello.").stdout)


def test_claude_prints_the_scripted_text_as_its_result(tmp_path: Path) -> None:
    with FakeAnthropicAPI([Reply(text="Hello from the fake")]) as api:
        lines = _claude(api, tmp_path)
        assert api.remaining == 0
    assert lines[0]["type"] == "system" and lines[0]["subtype"] == "init"
    result = lines[-1]
    assert (result["type"], result["subtype"], result["is_error"]) == ("result", "success", False)
    assert result["result"] == "Hello from the fake"
    assert api.requests[0]["model"] == FAKE_MODEL and api.requests[0]["stream"] is True
    assert "Say hello." in json.dumps(api.requests[0]["messages"])


def test_claude_calls_an_mcp_tool(tmp_path: Path) -> None:
    root = tmp_path / "root"
    config = {"mcpServers": {"orchestra": {"command": sys.executable, "args": [str(ECHO_SERVER), str(root)]}}}
    (tmp_path / "mcp.json").write_text(json.dumps(config), encoding="utf-8")
    write = ToolUse("mcp__orchestra__write_file", {"path": "out.txt", "content": "hello"})
    with FakeAnthropicAPI([Reply(text="Writing.", tool_calls=[write]), Reply(text="Done.")]) as api:
        lines = _claude(
            api,
            tmp_path,
            *("--tools", "", "--allowedTools", "mcp__orchestra"),
            *("--strict-mcp-config", "--mcp-config", str(tmp_path / "mcp.json")),
        )
    assert (root / "out.txt").read_text(encoding="utf-8") == "hello"
    offered = [tool["name"] for tool in api.requests[0]["tools"]]
    assert offered == ["mcp__orchestra__read_file", "mcp__orchestra__write_file"]
    results = [
        block
        for line in lines
        if line["type"] == "user"
        for block in line["message"]["content"]
        if block["type"] == "tool_result"
    ]
    assert len(results) == 1 and not results[0].get("is_error") and "wrote 5 characters" in str(results[0])
    assert lines[-1]["result"] == "Done." and lines[-1]["num_turns"] == 2


def test_codex_prints_the_scripted_text_as_an_agent_message(tmp_path: Path) -> None:
    with FakeOpenAIResponsesAPI([Reply(text="Hello from the fake")]) as api:
        lines = _codex(api, tmp_path)
        assert api.remaining == 0
    messages = [line["item"]["text"] for line in lines if line.get("item", {}).get("type") == "agent_message"]
    assert messages == ["Hello from the fake"]
    assert lines[-1]["type"] == "turn.completed" and lines[-1]["usage"]["input_tokens"] > 0
    assert "Say hello." in json.dumps(api.requests[0]["input"])


def test_codex_calls_an_mcp_tool(tmp_path: Path) -> None:
    root = tmp_path / "root"
    server = f"{{command={json.dumps(sys.executable)}, args=[{json.dumps(str(ECHO_SERVER))}, {json.dumps(str(root))}]}}"
    write = ToolUse("mcp__orchestra__write_file", {"path": "out.txt", "content": "hello"})
    with FakeOpenAIResponsesAPI([Reply(text="Writing.", tool_calls=[write]), Reply(text="Done.")]) as api:
        lines = _codex(
            api,
            tmp_path,
            *("-c", f"mcp_servers.orchestra={server}"),
            *("-c", 'mcp_servers.orchestra.default_tools_approval_mode="approve"'),
            *(
                "-c",
                "mcp_servers.orchestra.required=true",
            ),  # else the first request may go out before its tools
        )
    assert (root / "out.txt").read_text(encoding="utf-8") == "hello"
    calls = [
        line["item"]
        for line in lines
        if line["type"] == "item.completed" and line["item"]["type"] == "mcp_tool_call"
    ]
    assert len(calls) == 1
    assert (calls[0]["server"], calls[0]["tool"], calls[0]["status"]) == (
        "orchestra",
        "write_file",
        "completed",
    )
    assert calls[0]["result"]["content"][0]["text"] == "wrote 5 characters to out.txt"
    namespaces = [tool for tool in api.requests[0]["tools"] if tool.get("name") == "mcp__orchestra"]
    assert [tool["name"] for tool in namespaces[0]["tools"]] == ["read_file", "write_file"]
    assert [line["item"]["text"] for line in lines if line.get("item", {}).get("type") == "agent_message"][
        -1
    ] == ("Done.")


@pytest.mark.parametrize("fake", [FakeAnthropicAPI, FakeOpenAIResponsesAPI])
def test_a_used_up_script_is_a_clear_http_500(
    fake: type[FakeAnthropicAPI] | type[FakeOpenAIResponsesAPI],
) -> None:
    import urllib.error
    import urllib.request

    with fake([]) as api:
        path = "/v1/messages" if fake is FakeAnthropicAPI else "/responses"
        request = urllib.request.Request(
            api.base_url + path, data=json.dumps({"stream": True, "tools": [{}]}).encode(), method="POST"
        )
        with pytest.raises(urllib.error.HTTPError) as raised:
            urllib.request.urlopen(request, timeout=5)
        assert raised.value.code == 500
        assert "script is used up" in json.loads(raised.value.read())["error"]["message"]
        assert len(api.requests) == 1
