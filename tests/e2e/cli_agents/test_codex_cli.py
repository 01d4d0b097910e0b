"""`orchestra run` with Codex in the nodes: the real `codex` binary, a scripted fake Responses API, and
Orchestra's tools over MCP; its own shell's writes are caught by the untracked-writes safety net."""

from __future__ import annotations

import json
from collections.abc import Callable

from tests.e2e.cli_agents.conftest import AgentProject, codex_settings
from tests.support.fake_provider_api import FakeOpenAIResponsesAPI, Reply, ToolUse
from tests.support.orchestra_project import agent_turns, committed_files, trailers


def _write(path: str, content: str) -> ToolUse:
    # Codex offers MCP tools with `-` in their names turned to `_`.
    return ToolUse("mcp__orchestra__project__write_file", {"path": path, "content": content})


def test_codex_writes_through_mcp_are_committed_per_turn(make_project: Callable[[str], AgentProject]) -> None:
    project = make_project("codex")
    script = [
        Reply("First.", [_write("a.py", "A = 1\n")]),
        Reply("Second.", [_write("b.py", "B = 2\n")]),
        Reply("Both written."),
    ]
    with FakeOpenAIResponsesAPI(script) as api:
        project.configure(codex_settings(api.base_url))
        result = project.run(api.base_url)
        namespaces = {
            tool.get("name") for tool in api.requests[0].get("tools", []) if tool.get("type") == "namespace"
        }
    assert result.returncode == 0, result.stderr + result.stdout
    document = json.loads(result.stdout)
    assert document["status"] == "success", document
    turns = [turn for _, turn in agent_turns(project.root, document["session_id"])]
    written = [turn for turn in turns if turn.files_written]
    assert [turn.files_written for turn in written] == [("project:a.py",), ("project:b.py",)]
    assert [call.name for call in written[0].tool_calls] == ["project:write-file"]
    assert all(turn.provider == "openai" and not turn.untracked for turn in turns)
    sha = written[0].git_sha or ""
    assert committed_files(project.repo, sha) == ["a.py"]
    assert trailers(project.repo, sha)["Orchestra-Node"] == "implement"
    assert "mcp__orchestra" in namespaces


def test_files_codex_changes_with_its_own_shell_are_committed_apart(
    make_project: Callable[[str], AgentProject],
) -> None:
    project = make_project("codex")
    shell = ToolUse("exec_command", {"cmd": "echo stray > stray.txt"})
    script = [Reply("Shell.", [shell]), Reply("Tracked.", [_write("tracked.py", "T = 1\n")]), Reply("Done.")]
    with FakeOpenAIResponsesAPI(script) as api:
        # Codex's own sandbox cannot start with its home under /tmp (as in tests), so run its shell unsandboxed.
        project.configure(
            {**codex_settings(api.base_url, ["--sandbox", "danger-full-access"]), "tools": ["shell"]}
        )
        result = project.run(api.base_url)
    assert result.returncode == 0, result.stderr + result.stdout
    document = json.loads(result.stdout)
    turns = [turn for _, turn in agent_turns(project.root, document["session_id"])]
    untracked = [turn for turn in turns if turn.untracked]
    assert [turn.files_written for turn in untracked] == [("project:stray.txt",)], (
        result.stderr + result.stdout
    )
    assert trailers(project.repo, untracked[0].git_sha or "")["Orchestra-Untracked"] == "true"
    tracked = [turn for turn in turns if turn.files_written == ("project:tracked.py",)]
    assert tracked and not tracked[0].untracked
