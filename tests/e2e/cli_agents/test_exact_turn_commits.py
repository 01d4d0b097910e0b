"""A CLI agent's turn commit holds that turn's writes, as the turn wrote them, whatever the timing: the real
`claude` and `codex` go on with their next turns while Orchestra commits the last one (here a commit message
model that takes a second), and a later turn's edit of a file must not land in an earlier turn's commit."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.e2e.cli_agents.conftest import AgentProject, codex_settings
from tests.support.fake_provider_api import FakeAnthropicAPI, FakeOpenAIResponsesAPI, Reply, ToolUse
from tests.support.never_pausing_agent import agent_command
from tests.support.orchestra_project import agent_turns, committed_files, write_files

SLOW_COMMIT_MESSAGES = {"providers": {"default": "scripted", "scripted": {"cassette": "cassette.yaml"}}}
CASSETTE = """\
delay: 1
commit_messages:
  - "Add module a\\n\\nA is 1."
  - "Add module b and set A to 3\\n\\nB is 2."
default: "Done."
"""


def _tool(backend: str, name: str, **arguments: str) -> ToolUse:
    # Codex offers MCP tools with `-` in their names turned to `_`.
    return ToolUse(f"mcp__orchestra__project__{name if backend == 'claude-code' else name.replace('-', '_')}", arguments)


def _script(backend: str) -> list[Reply]:
    return [
        Reply("Module a.", [_tool(backend, "write-file", path="a.py", content="A = 1\n")]),
        Reply("Checking it.", [_tool(backend, "read-file", path="a.py")]),
        Reply(
            "Module b, and A becomes 3.",
            [
                _tool(backend, "write-file", path="b.py", content="B = 2\n"),
                _tool(backend, "edit-file", path="a.py", old_text="A = 1", new_text="A = 3"),
            ],
        ),
        Reply("Both modules are written."),
    ]


@pytest.mark.parametrize("backend", ["claude-code", "codex"])
def test_each_turn_commit_holds_what_that_turn_wrote_while_the_agent_runs_ahead(
    make_project: Callable[[str], AgentProject], backend: str
) -> None:
    project = make_project(backend)
    write_files(project.root, {"cassette.yaml": CASSETTE})
    fake = FakeAnthropicAPI if backend == "claude-code" else FakeOpenAIResponsesAPI
    with fake(_script(backend)) as api:
        settings = {"model": "claude-test-model"} if backend == "claude-code" else codex_settings(api.base_url)
        project.configure(settings, extra=SLOW_COMMIT_MESSAGES)
        result = project.run(api.base_url)
    assert result.returncode == 0, result.stderr + result.stdout
    document = json.loads(result.stdout)
    assert document["status"] == "success", document

    turns = [turn for _, turn in agent_turns(project.root, document["session_id"]) if turn.tool_calls]
    written = [turn.files_written for turn in turns]
    if backend == "claude-code":
        assert written == [("project:a.py",), (), ("project:b.py", "project:a.py")], result.stderr
    else:  # Codex's stream does not say where a response ends: each finished tool call ends a turn
        assert written == [("project:a.py",), (), ("project:b.py",), ("project:a.py",)], result.stderr
    assert "A = 1" in (turns[1].tool_calls[0].result or "") and turns[1].git_sha is None
    commits = [turn.git_sha or "" for turn in turns if turn.files_written]
    first, last = commits[0], commits[-1]
    assert committed_files(project.repo, first) == ["a.py"]
    assert project.repo.git("show", f"{first}:a.py") == "A = 1\n"
    assert project.repo.git("show", f"{last}:a.py") == "A = 3\n"
    assert project.repo.git("show", f"{last}:b.py") == "B = 2\n"
    if backend == "codex":
        assert committed_files(project.repo, commits[1]) == ["b.py"]
        assert project.repo.git("show", f"{commits[1]}:a.py") == "A = 1\n"
    branch = document["repos"]["project"]["branch"]
    assert project.session_branch_log(branch) == commits[::-1]
    assert project.repo.git("log", "-1", "--format=%s", first).strip() == "Add module a"


NEVER_PAUSING_SCRIPT = [
    {"text": "Module a.", "calls": [["project__write-file", {"path": "a.py", "content": "A = 1\n"}]]},
    {"text": "Checking it.", "calls": [["project__read-file", {"path": "a.py"}]]},
    {
        "text": "Module b, and A becomes 3.",
        "calls": [
            ["project__write-file", {"path": "b.py", "content": "B = 2\n"}],
            ["project__edit-file", {"path": "a.py", "old_text": "A = 1", "new_text": "A = 3"}],
        ],
    },
    {"text": "Both modules are written.", "calls": []},
]


@pytest.mark.parametrize("backend", ["claude-code", "codex"])
def test_turn_commits_are_exact_when_the_stream_is_read_after_every_write(
    make_project: Callable[[str], AgentProject], backend: str, tmp_path: Path
) -> None:
    """The stand-in makes all its calls before it prints a line: every later write is made before Orchestra
    reads the first turn's end, yet each turn's commit holds what that turn wrote."""
    project = make_project(backend)
    agent = agent_command(tmp_path, NEVER_PAUSING_SCRIPT)
    write_files(project.root, {"cassette.yaml": CASSETTE})
    project.configure({"command": str(agent)}, extra=SLOW_COMMIT_MESSAGES)
    result = project.run("http://127.0.0.1:9")
    assert result.returncode == 0, result.stderr + result.stdout
    document = json.loads(result.stdout)
    turns = [turn for _, turn in agent_turns(project.root, document["session_id"]) if turn.tool_calls]
    written = [turn.files_written for turn in turns]
    if backend == "claude-code":
        assert written == [("project:a.py",), (), ("project:b.py", "project:a.py")], result.stderr
    else:
        assert written == [("project:a.py",), (), ("project:b.py",), ("project:a.py",)], result.stderr
    assert "A = 1" in (turns[1].tool_calls[0].result or "")
    commits = [turn.git_sha or "" for turn in turns if turn.files_written]
    assert committed_files(project.repo, commits[0]) == ["a.py"]
    assert project.repo.git("show", f"{commits[0]}:a.py") == "A = 1\n"
    assert project.repo.git("show", f"{commits[-1]}:a.py") == "A = 3\n"
    assert project.repo.git("show", f"{commits[-1]}:b.py") == "B = 2\n"
    assert not any(turn.untracked for _, turn in agent_turns(project.root, document["session_id"]))
    worktree = project.root / ".orchestra" / "worktrees" / document["session_id"] / "project"
    assert project.repo.git("-C", str(worktree), "status", "--porcelain").strip() == ""
