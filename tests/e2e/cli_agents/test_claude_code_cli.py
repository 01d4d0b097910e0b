"""`orchestra run` with Claude Code in the nodes: the real `claude` binary, a scripted fake Anthropic API, and
Orchestra's tools over MCP (seed 000: "CLI writes via MCP", "CLI native writes disabled", MCP server rows)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.e2e.cli_agents.conftest import AgentProject
from tests.support.fake_provider_api import FakeAnthropicAPI, Reply, ToolUse
from tests.support.orchestra_project import agent_turns, committed_files, orchestra, trailers

WRITE = "mcp__orchestra__project__write-file"
READ = "mcp__orchestra__project__read-file"


def _write(path: str, content: str) -> ToolUse:
    return ToolUse(WRITE, {"path": path, "content": content})


def test_each_turn_that_writes_through_mcp_is_one_commit_with_the_agent_metadata(
    make_project: Callable[[str], AgentProject],
) -> None:
    project = make_project("claude-code")
    project.configure({"model": "claude-test-model"})
    script = [
        Reply("First module.", [_write("a.py", "A = 1\n")]),
        Reply(
            "Second module, after reading.", [_write("b.py", "B = 2\n"), ToolUse(READ, {"path": "README.md"})]
        ),
        Reply("Reading only.", [ToolUse(READ, {"path": "a.py"})]),
        Reply("Both modules are written."),
    ]
    with FakeAnthropicAPI(script) as api:
        result = project.run(api.base_url)
    assert result.returncode == 0, result.stderr + result.stdout
    document = json.loads(result.stdout)
    assert document["status"] == "success"

    session = document["session_id"]
    branch = document["repos"]["project"]["branch"]
    turns = [turn for _, turn in agent_turns(project.root, session)]
    assert [turn.turn_number for turn in turns] == [0, 1, 2, 3]
    assert [turn.files_written for turn in turns] == [("project:a.py",), ("project:b.py",), (), ()]
    assert turns[2].git_sha is None and turns[3].git_sha is None
    assert [call.name for call in turns[1].tool_calls] == ["project:write-file", "project:read-file"]
    assert "hello" in (turns[1].tool_calls[1].result or "")
    assert all(turn.model == "claude-test-model" and turn.provider == "anthropic" for turn in turns)
    assert turns[0].agent_state_ref and turns[0].agent_state_ref.startswith("claude-code:")

    first, second = turns[0].git_sha, turns[1].git_sha
    assert first and second
    assert committed_files(project.repo, first) == ["a.py"]
    assert committed_files(project.repo, second) == ["b.py"]
    author = project.repo.git("log", "-1", "--format=%an <%ae>", first).strip()
    assert author == "implement (claude-test-model) <orchestra@local>"
    assert trailers(project.repo, first) == {
        "Orchestra-Model": "claude-test-model",
        "Orchestra-Provider": "anthropic",
        "Orchestra-Node": "implement",
        "Orchestra-Pipeline": "impl",
        "Orchestra-Session": session,
        "Orchestra-Turn": "0",
    }
    assert project.session_branch_log(branch) == [second, first]
    shown = orchestra("show", first, "--json", cwd=project.root)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["turn"]["turn_number"] == 0


def test_claude_is_offered_only_orchestras_tools_never_its_own_writers(
    make_project: Callable[[str], AgentProject],
) -> None:
    project = make_project("claude-code")
    project.configure()
    with FakeAnthropicAPI([Reply("Nothing to do.")]) as api:
        result = project.run(api.base_url)
        offered = {tool["name"] for tool in api.requests[0].get("tools", [])}
    assert result.returncode == 0, result.stderr
    assert offered >= {WRITE, READ, "mcp__orchestra__project__edit-file", "mcp__orchestra__report_outcome"}
    assert all(name.startswith("mcp__orchestra__") for name in offered), offered


def test_path_escapes_over_mcp_are_tool_errors_the_agent_reads_and_nothing_leaves_the_worktree(
    make_project: Callable[[str], AgentProject], tmp_path: Path
) -> None:
    project = make_project("claude-code")
    project.repo.write("gl", "")
    (project.root / "gl").unlink()
    (project.root / "gl").symlink_to(".git")
    project.repo.commit_all("a symlink to .git")
    project.configure()
    outside = tmp_path / "outside.txt"
    script = [
        Reply(
            "Trying.",
            [
                _write("../outside.txt", "x"),
                _write(str(outside), "x"),
                _write(".git/config", "[core]\n\tfsmonitor = touch /tmp/pwned\n"),
                _write("gl/hooks/post-commit", "#!/bin/sh\ntouch /tmp/pwned\n"),
            ],
        ),
        Reply("Gave up."),
    ]
    with FakeAnthropicAPI(script) as api:
        result = project.run(api.base_url)
        results = [
            block
            for request in api.requests[1:2]
            for message in request["messages"]
            for block in (message["content"] if isinstance(message["content"], list) else [])
            if block.get("type") == "tool_result"
        ]
    assert result.returncode == 0, result.stderr
    assert len(results) == 4 and all(block.get("is_error") for block in results), results
    assert not outside.exists()
    assert "fsmonitor" not in (project.root / ".git" / "config").read_text()
    assert not (project.root / ".git" / "hooks" / "post-commit").exists()


def test_report_outcome_over_mcp_decides_the_node_outcome(
    make_project: Callable[[str], AgentProject],
) -> None:
    project = make_project("claude-code")
    project.configure()
    report = ToolUse("mcp__orchestra__report_outcome", {"status": "fail", "notes": "tests do not pass"})
    with FakeAnthropicAPI([Reply("Reporting.", [report]), Reply("Reported.")]) as api:
        result = project.run(api.base_url)
    document = json.loads(result.stdout)
    assert document["status"] == "fail", document
    assert "tests do not pass" in (document.get("failure_reason") or "")


def test_writes_made_with_a_native_tool_are_committed_apart_with_a_warning(
    make_project: Callable[[str], AgentProject],
) -> None:
    project = make_project("claude-code")
    project.configure({"tools": ["Bash"]})
    script = [
        Reply("Shell.", [ToolUse("Bash", {"command": "echo stray > stray.txt", "description": "write"})]),
        Reply("Tracked.", [_write("tracked.py", "T = 1\n")]),
        Reply("Done."),
    ]
    with FakeAnthropicAPI(script) as api:
        result = project.run(api.base_url)
    assert result.returncode == 0, result.stderr + result.stdout
    assert "stray.txt" in result.stderr and "untracked" in result.stderr.lower()
    session = json.loads(result.stdout)["session_id"]
    turns = [turn for _, turn in agent_turns(project.root, session)]
    untracked = [turn for turn in turns if turn.untracked]
    assert [turn.files_written for turn in untracked] == [("project:stray.txt",)]
    sha = untracked[0].git_sha
    assert sha and committed_files(project.repo, sha) == ["stray.txt"]
    assert trailers(project.repo, sha)["Orchestra-Untracked"] == "true"
    tracked = [turn for turn in turns if turn.files_written == ("project:tracked.py",)]
    assert tracked and committed_files(project.repo, tracked[0].git_sha or "") == ["tracked.py"]


def test_an_api_failure_fails_the_node_with_the_agents_error(
    make_project: Callable[[str], AgentProject],
) -> None:
    project = make_project("claude-code")
    project.configure()
    with FakeAnthropicAPI([]) as api:  # out of steps: every model request answers HTTP 500
        result = project.run(api.base_url)
    document = json.loads(result.stdout)
    assert document["status"] == "fail"
    assert "claude-code" in document["failure_reason"]


def test_hooks_in_the_repos_claude_settings_never_run(
    make_project: Callable[[str], AgentProject], tmp_path: Path
) -> None:
    """An earlier agent can write .claude/settings.json into the repo; its hooks would run on the host."""
    project = make_project("claude-code")
    marker = tmp_path / "hook-ran"
    hook = {"type": "command", "command": f"touch {marker}"}
    hooks = {"SessionStart": [{"hooks": [hook]}], "UserPromptSubmit": [{"hooks": [hook]}]}
    project.repo.write(".claude/settings.json", json.dumps({"hooks": hooks}))
    project.repo.commit_all("hostile project settings")
    project.configure()
    with FakeAnthropicAPI([Reply("Done.")]) as api:
        result = project.run(api.base_url)
    assert result.returncode == 0, result.stderr
    assert not marker.exists()
