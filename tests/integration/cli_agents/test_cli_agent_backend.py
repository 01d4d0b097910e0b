"""CLIAgentBackend through the library API: the node's usage ledger, and a bad `agent.workdir`."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestra_adapters.backends.cli_agent import create_cli_backend
from orchestra_adapters.backends.cli_agent.backend import CLIAgentBackend
from orchestra_adapters.git.subprocess_git import SubprocessGit
from orchestra_core import parse_pipeline, run_pipeline
from orchestra_core.model.settings import CliAgentSettings, OrchestraSettings, RepoSettings, WorkspaceSettings
from orchestra_core.runs.ports import AgentRuntime
from tests.support.cli_agents import claude_binary, claude_env
from tests.support.fake_provider_api import FakeAnthropicAPI, Reply, ToolUse
from tests.support.git_repos import GitRepo, git


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    GitRepo(root).write("README.md", "hi\n")
    GitRepo(root).write(".gitignore", ".orchestra/\n")
    GitRepo(root).commit_all("initial")
    return root


def _run(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, node_attrs: str, script: list[Reply]):
    graph = parse_pipeline(
        f'digraph g {{ start [shape=Mdiamond]; exit [shape=Msquare]; impl [prompt="x"{node_attrs}]; '
        "start -> impl -> exit }"
    )
    settings = OrchestraSettings(workspace=WorkspaceSettings(repos={"project": RepoSettings(path=str(project))}))
    built: list[CLIAgentBackend] = []

    def factory(runtime: AgentRuntime) -> CLIAgentBackend:
        backend = create_cli_backend("claude-code", CliAgentSettings(command=str(claude_binary()), model="m"), runtime)
        built.append(backend)
        return backend

    with FakeAnthropicAPI(script) as api:
        for key, value in claude_env(api.base_url, tmp_path / "home").items():
            monkeypatch.setenv(key, value)
        result = run_pipeline(graph, settings=settings, project_root=project, git=SubprocessGit(), backend=factory)
    return result, built[0]


def test_the_backend_keeps_each_nodes_turns_tokens_and_time(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write = ToolUse("mcp__orchestra__project__write-file", {"path": "a.py", "content": "A = 1\n"})
    result, backend = _run(project, tmp_path, monkeypatch, "", [Reply("one", [write]), Reply("done")])
    assert result.succeeded, result.failure_reason
    usage = backend.usage.for_node("impl")
    assert usage.turns == 2 and usage.model_calls == 2
    assert usage.tokens.prompt_tokens > 0 and usage.duration_s > 0


def test_an_agent_workdir_naming_no_repo_fails_the_node_with_the_repos(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result, _ = _run(project, tmp_path, monkeypatch, ', agent.workdir="nope"', [Reply("never")])
    assert not result.succeeded
    assert "agent.workdir='nope' names no repo (repos: project)" in (result.failure_reason or "")
