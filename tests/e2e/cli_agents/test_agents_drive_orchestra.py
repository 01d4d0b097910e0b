"""The real Claude Code and Codex drive Orchestra through `orchestra mcp serve --control`, their models the scripted
fakes of their providers' APIs: each starts a run, reads the session's status and lists the sessions; the run
happens in the project (its store says so). Claude Code connects by --mcp-config, over stdio and over HTTP with the
token; Codex by the config.toml entry of docs/mcp.md. Skipped without the pinned binaries; a failure under CI=1."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.mcp.test_control_server import GATED
from tests.integration.mcp.test_control_server_http import HttpControl
from tests.support.cli_agents import (
    FAKE_MODEL,
    claude_binary,
    claude_env,
    codex_binary,
    codex_env,
    codex_provider_args,
)
from tests.support.fake_provider_api import FakeAnthropicAPI, FakeOpenAIResponsesAPI, Reply, ToolUse
from tests.support.orchestra_project import ORCHESTRA, run_json, write_files
from tests.support.server import make_project, wait_until

TIMEOUT = 120


class RunWatcher:
    """Holds the fake model's answer to the request after `start_run` until the run has ended, so the model's
    next call reads a finished session (the run goes on in the server; the scripted model does not wait)."""

    project: Path

    def next_step(self, body: dict[str, Any]) -> Reply | None:
        if _called(body, "start_run") and not _called(body, "session_status"):
            wait_until(self._ended, "the run started through MCP to end", timeout=60)
        return super().next_step(body)  # type: ignore[misc]

    def _ended(self) -> bool:
        sessions = run_json("status", cwd=self.project)["sessions"]
        return bool(sessions) and sessions[0]["status"] not in ("running", "new")


class WatchingAnthropicAPI(RunWatcher, FakeAnthropicAPI):
    def __init__(self, script: list[Reply], project: Path) -> None:
        super().__init__(script)
        self.project = project


class WatchingResponsesAPI(RunWatcher, FakeOpenAIResponsesAPI):
    def __init__(self, script: list[Reply], project: Path) -> None:
        super().__init__(script)
        self.project = project


def _called(body: dict[str, Any], tool: str) -> bool:
    """Whether the conversation in a model request holds a call of the control server's `tool` (Anthropic's
    `tool_use` blocks, or the Responses API's `function_call` items)."""
    messages = body.get("messages") or []
    blocks = [b for m in messages if isinstance(m.get("content"), list) for b in m["content"]]
    anthropic = any(b.get("type") == "tool_use" and b.get("name") == f"mcp__orchestra__{tool}" for b in blocks)
    items = body.get("input") if isinstance(body.get("input"), list) else []
    responses = any(item.get("type") == "function_call" and item.get("name") == tool for item in items)
    return anthropic or responses


SCRIPT = [
    Reply("Starting the release pipeline.", [
        ToolUse("mcp__orchestra__start_run", {"pipeline": "pipelines/gated.dot", "auto_approve": True}),
    ]),
    Reply("Checking on it.", [ToolUse("mcp__orchestra__session_status", {"session_id": "1"})]),
    Reply("Listing the sessions.", [ToolUse("mcp__orchestra__list_sessions", {})]),
    Reply("The release pipeline ran and succeeded."),
]  # fmt: skip
PROMPT = "Run the release pipeline and tell me how it went."


def assert_the_run_happened(project: Path, answers: list[str]) -> None:
    """The three tool answers (start, status, list) say what the store says: session 1 ran to its end."""
    started, status, listed = (json.loads(answer) for answer in answers)
    assert (started["session_id"], started["status"], started["pipeline"]) == ("1", "running", "pipelines/gated.dot")
    assert (status["session_id"], status["status"], status["pipeline"]) == ("1", "success", "gated")
    assert [(row["session_id"], row["status"]) for row in listed["sessions"]] == [("1", "success")]
    recorded = run_json("status", "1", cwd=project)
    assert recorded["status"] == "success"
    assert [node["id"] for node in recorded["nodes"]] == ["start", "prepare", "review", "ship", "done"]


TOKEN = "agent-token-0123456789"


@pytest.fixture(params=["stdio", "http"])
def served(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Path, str | None]]:
    """A project, and the URL of its control server over HTTP (its token TOKEN), or None: the agent starts the
    server over stdio."""
    project = make_project(tmp_path / "project")
    write_files(project, {"pipelines/gated.dot": GATED})
    if request.param == "stdio":
        yield project, None
        return
    http = HttpControl(project, tmp_path / "server-stderr.txt", token=TOKEN)
    try:
        yield project, http.url
    finally:
        http.stop()


def claude_config(project: Path, url: str | None) -> dict[str, Any]:
    """docs/mcp.md's `.mcp.json` entry (the token from the environment), but the paths and the server's name."""
    if url is None:
        return {"command": str(ORCHESTRA), "args": ["mcp", "serve", "--control", "--project", str(project)]}
    return {"type": "http", "url": url, "headers": {"Authorization": "Bearer ${ORCHESTRA_MCP_CONTROL_TOKEN}"}}


def codex_config(project: Path, url: str | None) -> str:
    """docs/mcp.md's `config.toml` entry, but the paths."""
    if url is None:
        where = (
            f"command = {json.dumps(str(ORCHESTRA))}\n"
            f'args = ["mcp", "serve", "--control", "--project", {json.dumps(str(project))}]\n'
        )
    else:
        where = f'url = "{url}"\nbearer_token_env_var = "ORCHESTRA_MCP_CONTROL_TOKEN"\n'
    return f'[mcp_servers.orchestra]\n{where}default_tools_approval_mode = "approve"\nrequired = true\n'


def test_claude_code_starts_a_run_and_reads_its_status_through_the_control_server(
    served: tuple[Path, str | None], tmp_path: Path
) -> None:
    claude = claude_binary()
    project, url = served
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"orchestra": claude_config(project, url)}}), encoding="utf-8")
    with WatchingAnthropicAPI(SCRIPT, project) as api:
        done = subprocess.run(
            [
                str(claude), "-p", "--output-format", "stream-json", "--verbose", "--model", FAKE_MODEL,
                "--tools", "", "--allowedTools", "mcp__orchestra",
                "--strict-mcp-config", "--mcp-config", str(config),
            ],
            input=PROMPT, capture_output=True, text=True,
            env={**claude_env(api.base_url, tmp_path / "home"), "ORCHESTRA_MCP_CONTROL_TOKEN": TOKEN}, cwd=tmp_path,
            timeout=TIMEOUT,
        )  # fmt: skip
        assert done.returncode == 0, f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}"
        assert api.remaining == 0
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]

    init = lines[0]
    assert [(server["name"], server["status"]) for server in init["mcp_servers"]] == [("orchestra", "connected")]
    offered = sorted(tool["name"] for tool in api.requests[0]["tools"])
    assert "mcp__orchestra__start_run" in offered and "mcp__orchestra__answer_question" in offered
    assert not [name for name in offered if "write" in name or "edit" in name]  # no file tools
    results = [
        block
        for line in lines
        if line["type"] == "user"
        for block in line["message"]["content"]
        if block["type"] == "tool_result"
    ]
    assert len(results) == 3 and not any(result.get("is_error") for result in results)
    assert lines[-1]["result"] == "The release pipeline ran and succeeded."
    assert_the_run_happened(project, [_text(result) for result in results])


def _text(result: dict[str, Any]) -> str:
    content = result["content"]
    return content if isinstance(content, str) else "".join(block.get("text", "") for block in content)


def test_codex_with_the_documented_config_starts_a_run_and_reads_its_status(
    served: tuple[Path, str | None], tmp_path: Path
) -> None:
    codex = codex_binary()
    project, url = served
    with WatchingResponsesAPI(SCRIPT, project) as api:
        env = {**codex_env(api.base_url, tmp_path / "home"), "ORCHESTRA_MCP_CONTROL_TOKEN": TOKEN}
        (Path(env["CODEX_HOME"]) / "config.toml").write_text(codex_config(project, url), encoding="utf-8")
        done = subprocess.run(
            [str(codex), "exec", "--json", "--skip-git-repo-check", "-C", str(tmp_path),
             *codex_provider_args(api.base_url), "-"],
            input=PROMPT, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=TIMEOUT,
        )  # fmt: skip
        assert done.returncode == 0, f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}"
        assert api.remaining == 0
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    calls = [
        line["item"]
        for line in lines
        if line["type"] == "item.completed" and line["item"]["type"] == "mcp_tool_call"
    ]
    assert [(call["server"], call["tool"], call["status"]) for call in calls] == [
        ("orchestra", tool, "completed") for tool in ("start_run", "session_status", "list_sessions")
    ]
    assert_the_run_happened(project, [_codex_text(call["result"]) for call in calls])


def _codex_text(result: dict[str, Any]) -> str:
    return "".join(block.get("text", "") for block in result["content"])
