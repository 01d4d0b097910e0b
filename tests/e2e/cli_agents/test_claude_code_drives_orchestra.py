"""The real Claude Code drives Orchestra through `orchestra mcp serve --control` (connected by --mcp-config), its
model the scripted fake Anthropic API: it starts a run, reads the session's status and lists the sessions; the run
happens in the project (its store says so). Skipped without the pinned `claude`; a failure under CI=1."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.integration.mcp.test_control_server import GATED
from tests.support.cli_agents import FAKE_MODEL, claude_binary, claude_env
from tests.support.fake_provider_api import FakeAnthropicAPI, Reply, ToolUse
from tests.support.orchestra_project import ORCHESTRA, run_json, write_files
from tests.support.server import make_project, wait_until

TIMEOUT = 120


class RunWatchingAPI(FakeAnthropicAPI):
    """The fake Anthropic API, holding its answer to the request after `start_run` until the run has ended, so
    the model's next call reads a finished session (the run goes on in the server; the model does not wait)."""

    def __init__(self, script: list[Reply], project: Path) -> None:
        super().__init__(script)
        self.project = project

    def next_step(self, body: dict[str, Any]) -> Reply | None:
        if _called(body, "mcp__orchestra__start_run") and not _called(body, "mcp__orchestra__session_status"):
            wait_until(self._ended, "the run started through MCP to end", timeout=60)
        return super().next_step(body)

    def _ended(self) -> bool:
        sessions = run_json("status", cwd=self.project)["sessions"]
        return bool(sessions) and sessions[0]["status"] not in ("running", "new")


def _called(body: dict[str, Any], tool: str) -> bool:
    return any(
        block.get("type") == "tool_use" and block.get("name") == tool
        for message in body.get("messages", [])
        if isinstance(message.get("content"), list)
        for block in message["content"]
    )


def test_claude_code_starts_a_run_and_reads_its_status_through_the_control_server(tmp_path: Path) -> None:
    claude = claude_binary()
    project = make_project(tmp_path / "project")
    write_files(project, {"pipelines/gated.dot": GATED})
    server = {"command": str(ORCHESTRA), "args": ["mcp", "serve", "--control", "--project", str(project)]}
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": {"orchestra": server}}), encoding="utf-8")
    script = [
        Reply("Starting the release pipeline.", [
            ToolUse("mcp__orchestra__start_run", {"pipeline": "pipelines/gated.dot", "auto_approve": True}),
        ]),
        Reply("Checking on it.", [ToolUse("mcp__orchestra__session_status", {"session_id": "1"})]),
        Reply("Listing the sessions.", [ToolUse("mcp__orchestra__list_sessions", {})]),
        Reply("The release pipeline ran and succeeded."),
    ]  # fmt: skip
    with RunWatchingAPI(script, project) as api:
        done = subprocess.run(
            [
                str(claude), "-p", "--output-format", "stream-json", "--verbose", "--model", FAKE_MODEL,
                "--tools", "", "--allowedTools", "mcp__orchestra",
                "--strict-mcp-config", "--mcp-config", str(tmp_path / "mcp.json"),
            ],
            input="Run the release pipeline and tell me how it went.", capture_output=True, text=True,
            env=claude_env(api.base_url, tmp_path / "home"), cwd=tmp_path, timeout=TIMEOUT,
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
    started, status, listed = (json.loads(_text(result)) for result in results)
    assert (started["session_id"], started["status"], started["pipeline"]) == ("1", "running", "pipelines/gated.dot")
    assert (status["session_id"], status["status"], status["pipeline"]) == ("1", "success", "gated")
    assert [(row["session_id"], row["status"]) for row in listed["sessions"]] == [("1", "success")]
    assert lines[-1]["result"] == "The release pipeline ran and succeeded."
    # The run happened in the project: its session in the store, through the human gate (auto-approved) to the end.
    recorded = run_json("status", "1", cwd=project)
    assert recorded["status"] == "success"
    assert [node["id"] for node in recorded["nodes"]] == ["start", "prepare", "review", "ship", "done"]


def _text(result: dict[str, Any]) -> str:
    content = result["content"]
    return content if isinstance(content, str) else "".join(block.get("text", "") for block in content)
