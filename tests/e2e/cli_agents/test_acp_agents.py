"""`orchestra run` with ACP agents in the nodes (`backend: acp`): the real Gemini CLI (`gemini --acp`) against the
scripted fake Gemini API, and the real Claude Code ACP adapter (`claude-code-acp`) against the scripted fake
Anthropic API, each writing files through Orchestra's tools over several turns. orchestra.yaml is the recipe of
docs/backends.md; the provider's base URL and key come from the environment, as a user's key would."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli_agents import (
    claude_code_acp_binary,
    claude_code_acp_env,
    gemini_binary,
    gemini_env,
)
from tests.support.fake_gemini_api import FakeGeminiAPI
from tests.support.fake_provider_api import FakeAnthropicAPI, Reply, ToolUse
from tests.support.git_repos import GitRepo, git
from tests.support.orchestra_project import agent_turns, committed_files, orchestra, trailers, write_files
from tests.support.processes import live_processes_with, wait_until

PIPELINE = """digraph impl {
  graph [goal="Add two modules"]
  start [shape=Mdiamond]
  exit [shape=Msquare]
  implement [prompt="Write a.py and b.py", timeout="240s"]
  start -> implement -> exit
}
"""
MARK = "ORCHESTRA_ACP_TEST_RUN"  # in the run's environment, so every process it started can be found after it


@pytest.fixture
def project(tmp_path: Path) -> GitRepo:
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    repo = GitRepo(root)
    repo.write("README.md", "hello\n")
    repo.write(".gitignore", ".orchestra/\n")
    repo.commit_all("initial")
    return repo


def _configure(repo: GitRepo, command: Sequence[str], env: dict[str, str], model: str | None) -> None:
    """orchestra.yaml with the agent's `acp:` section, naming the model the agent is set to use (for an agent
    that does not say which model answers, the turns and trailers take `acp.model`); None: no `acp.model`."""
    acp: dict[str, Any] = {"command": list(command), "env": env}
    if model is not None:
        acp["model"] = model
    config = {"workspace": {"repos": {"project": {"path": "."}}}, "backend": "acp", "acp": acp}
    write_files(repo.path, {"orchestra.yaml": json.dumps(config, indent=2), "pipeline.dot": PIPELINE})


def _run(repo: GitRepo, env: dict[str, str]) -> dict[str, Any]:
    env = {**env, MARK: str(repo.path)}
    result = orchestra("run", "pipeline.dot", "--json", cwd=repo.path, env=env, timeout=300)
    assert result.returncode == 0, result.stderr + result.stdout
    # the agent, its MCP server and whatever they started are gone when the run ends
    assert wait_until(lambda: not live_processes_with(MARK, str(repo.path)), 10), live_processes_with(
        MARK, str(repo.path)
    )
    document: dict[str, Any] = json.loads(result.stdout)
    assert document["status"] == "success", document
    return document


def _script(write: str, read: str, *, together: bool = True) -> list[Reply]:
    """Four model responses: one writes a.py, one writes b.py and reads the README, one only reads, the last
    answers. Not `together`: the second's two calls in two responses (five then)."""
    second = [ToolUse(write, {"path": "b.py", "content": "B = 2\n"}), ToolUse(read, {"path": "README.md"})]
    return [
        Reply("First module.", [ToolUse(write, {"path": "a.py", "content": "A = 1\n"})]),
        *(
            [Reply("Second module, after reading.", second)]
            if together
            else [Reply("Second module.", second[:1]), Reply("After reading.", second[1:])]
        ),
        Reply("Reading only.", [ToolUse(read, {"path": "a.py"})]),
        Reply("Both modules are written."),
    ]


WRITE, READ = "project:write-file", "project:read-file"
TOGETHER = [[WRITE], [WRITE, READ], [READ], []]  # the calls of each turn, _script(together=True)
APART = [[WRITE], [WRITE], [READ], [READ], []]


def _assert_turns_committed(repo: GitRepo, document: dict[str, Any], model: str, calls: list[list[str]]) -> None:
    """One turn per model response with its calls; the two that wrote committed with the agent's trailers on the
    session branch, the others not; the store and `status --json` both have them."""
    session = document["session_id"]
    branch = document["repos"]["project"]["branch"]
    turns = [turn for _, turn in agent_turns(repo.path, session)]
    numbers = list(range(len(calls)))
    assert [turn.turn_number for turn in turns] == numbers
    assert [[call.name for call in turn.tool_calls] for turn in turns] == calls
    written = [("project:a.py",), ("project:b.py",)] + [()] * (len(calls) - 2)
    assert [turn.files_written for turn in turns] == written
    assert turns[1].tool_calls[0].args == {"path": "b.py", "content": "B = 2\n"}
    assert "hello" in (next(call for call in turns[-3].tool_calls if call.name == READ).result or "")
    assert turns[-1].messages and "Both modules are written." in str(turns[-1].messages)
    assert all(turn.model == model for turn in turns), [turn.model for turn in turns]
    first, second = turns[0].git_sha, turns[1].git_sha
    assert first and second and all(turn.git_sha is None for turn in turns[2:])
    assert committed_files(repo, first) == ["a.py"] and committed_files(repo, second) == ["b.py"]
    assert trailers(repo, second) == {
        "Orchestra-Model": model,
        "Orchestra-Provider": "acp",
        "Orchestra-Node": "implement",
        "Orchestra-Pipeline": "impl",
        "Orchestra-Session": session,
        "Orchestra-Turn": "1",
    }
    assert git(repo.path, "log", "--format=%H", f"main..{branch}").split() == [second, first]
    assert git(repo.path, "show", f"{branch}:a.py") == "A = 1\n"
    status = orchestra("status", session, "--json", cwd=repo.path)
    assert status.returncode == 0, status.stderr
    shown = _status_turns(json.loads(status.stdout))
    assert [(turn["turn_number"], turn["model"], turn["git_sha"]) for turn in shown] == [
        (turn.turn_number, model, turn.git_sha) for turn in turns
    ]  # fmt: skip


def _status_turns(document: dict[str, Any]) -> list[dict[str, Any]]:
    """The agent turns among `status --json`'s records."""
    return [turn for turn in document["turns"] if turn["type"] == "dev.orchestra.AgentTurn"]


@pytest.mark.parametrize("configured", ["gemini-test-model", None], ids=["acp.model", "model-the-agent-reports"])
def test_gemini_cli_over_acp_writes_through_orchestras_tools_turn_by_turn(
    project: GitRepo, tmp_path: Path, configured: str | None
) -> None:
    env = gemini_env("", tmp_path / "home", model="gemini-test-model")
    recipe = {name: env.pop(name) for name in ("GEMINI_MODEL", "GEMINI_CLI_TRUST_WORKSPACE", "GEMINI_CLI_NO_RELAUNCH")}
    _configure(project, [str(gemini_binary()), "--acp"], recipe, configured)  # Gemini names its model itself
    # Gemini CLI runs a response's tool calls one after another, each finished before the next starts, and ACP
    # marks no response's end: two calls in one response would be two turns (docs/backends.md), so one call each
    script = _script("mcp_orchestra_project__write-file", "mcp_orchestra_project__read-file", together=False)
    with FakeGeminiAPI(script) as api:
        env["GOOGLE_GEMINI_BASE_URL"] = api.base_url
        document = _run(project, env)
        assert api.remaining == 0 and not api.unknown_requests
        assert api.models == ["gemini-test-model"] * 5
    _assert_turns_committed(project, document, "gemini-test-model", APART)


def test_claude_code_acp_writes_through_orchestras_tools_turn_by_turn(project: GitRepo, tmp_path: Path) -> None:
    env = claude_code_acp_env("", tmp_path / "home", model="claude-test-model")
    recipe = {"ANTHROPIC_DEFAULT_SONNET_MODEL": env.pop("ANTHROPIC_DEFAULT_SONNET_MODEL")}
    _configure(project, [str(claude_code_acp_binary())], recipe, "claude-test-model")
    with FakeAnthropicAPI(_script("mcp__orchestra__project__write-file", "mcp__orchestra__project__read-file")) as api:
        env["ANTHROPIC_BASE_URL"] = api.base_url
        document = _run(project, env)
        assert api.remaining == 0 and not api.unknown_requests
        assert {request["model"] for request in api.requests} == {"claude-test-model"}
    _assert_turns_committed(project, document, "claude-test-model", TOGETHER)
    assert not (project.path / ".claude").exists()


def test_gemini_cli_relaunched_in_a_child_process_is_stopped_with_it(project: GitRepo, tmp_path: Path) -> None:
    # without GEMINI_CLI_NO_RELAUNCH the CLI runs itself again as a child node process, which SIGTERM to the
    # parent leaves running: the agent's process group must go as a whole (_run checks no process is left)
    env = gemini_env("", tmp_path / "home", model="gemini-test-model")
    del env["GEMINI_CLI_NO_RELAUNCH"]
    _configure(project, [str(gemini_binary()), "--acp"], {}, "gemini-test-model")
    with FakeGeminiAPI([Reply("Nothing to change.")]) as api:
        env["GOOGLE_GEMINI_BASE_URL"] = api.base_url
        document = _run(project, env)
        assert api.remaining == 0
    assert [turn.model for _, turn in agent_turns(project.path, document["session_id"])] == ["gemini-test-model"]
