"""CLIAgentBackend through the library API: the node's usage ledger, and a bad `agent.workdir`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestra_adapters.backends.cli_agent import create_cli_backend
from orchestra_adapters.backends.cli_agent.backend import CLIAgentBackend
from orchestra_adapters.git.subprocess_git import SubprocessGit
from orchestra_core import parse_pipeline, run_pipeline
from orchestra_core.model.events import AgentTurnCompleted, ModelFailedOver
from orchestra_core.model.settings import (
    CliAgentSettings,
    OrchestraSettings,
    ProviderSettings,
    ProvidersSettings,
    RepoSettings,
    WorkspaceSettings,
)
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


def test_claude_code_gets_the_nodes_fallbacks_of_its_provider_and_its_turns_name_the_model_that_answered(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    graph = parse_pipeline(
        'digraph g { start [shape=Mdiamond]; exit [shape=Msquare]; impl [prompt="x", llm_model="smart"]; '
        "start -> impl -> exit }"
    )
    smart = ProviderSettings(models={"smart": "primary-x"}, fallbacks={"smart": ("backup-y", "openai:gpt-5")})
    settings = OrchestraSettings(
        providers=ProvidersSettings("anthropic", {"anthropic": smart}),
        workspace=WorkspaceSettings(repos={"project": RepoSettings(path=str(project))}),
    )
    events: list[object] = []

    def factory(runtime: AgentRuntime) -> CLIAgentBackend:
        return create_cli_backend("claude-code", CliAgentSettings(command=str(claude_binary())), runtime)

    write = ToolUse("mcp__orchestra__project__write-file", {"path": "a.py", "content": "A = 1\n"})
    with FakeAnthropicAPI([Reply("one", [write]), Reply("done")], failing_models={"primary-x": 503}) as api:
        for key, value in claude_env(api.base_url, tmp_path / "home").items():
            monkeypatch.setenv(key, value)
        result = run_pipeline(
            graph, settings=settings, project_root=project, git=SubprocessGit(), backend=factory, on_event=events.append
        )
        served = [request.get("model") for request in api.requests]
    assert result.succeeded, result.failure_reason
    assert api.failed_requests and set(served) == {"backup-y"}  # the OpenAI fallback is not Claude Code's to use
    turns = [event.turn for event in events if isinstance(event, AgentTurnCompleted)]
    reason = "anthropic primary-x: Switched to backup-y due to high demand for primary-x"  # Claude Code's own words
    assert [(t.model, t.requested_model, t.fallback_reason) for t in turns] == [("backup-y", "primary-x", reason)] * 2
    [failover] = [event.failover for event in events if isinstance(event, ModelFailedOver)]
    assert (failover.from_model, failover.to_model, failover.cause) == ("primary-x", "backup-y", "unavailable")
    log = git(project, "log", "-1", "--format=%(trailers:key=Orchestra-Model,valueonly)", turns[0].git_sha or "")
    assert log.strip() == "backup-y"


def test_claude_codes_text_and_tool_calls_are_told_as_its_stream_shows_them_before_its_turns_end(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from orchestra_core.model.events import AgentActivity

    graph = parse_pipeline(
        'digraph g { start [shape=Mdiamond]; exit [shape=Msquare]; impl [prompt="x"]; start -> impl -> exit }'
    )
    settings = OrchestraSettings(workspace=WorkspaceSettings(repos={"project": RepoSettings(path=str(project))}))
    events: list[object] = []

    def factory(runtime: AgentRuntime) -> CLIAgentBackend:
        return create_cli_backend("claude-code", CliAgentSettings(command=str(claude_binary()), model="m"), runtime)

    write = ToolUse("mcp__orchestra__project__write-file", {"path": "a.py", "content": "<script>A = 1</script>\n"})
    with FakeAnthropicAPI([Reply("Writing <b>a.py</b>", [write]), Reply("done")]) as api:
        for key, value in claude_env(api.base_url, tmp_path / "home").items():
            monkeypatch.setenv(key, value)
        result = run_pipeline(
            graph, settings=settings, project_root=project, git=SubprocessGit(), backend=factory, on_event=events.append
        )
    assert result.succeeded, result.failure_reason
    heard = [(e.activity, e.turn, e.tool, e.text) for e in events if isinstance(e, AgentActivity)]
    assert heard[0] == ("text", 0, "", "Writing <b>a.py</b>")
    assert heard[1][:3] == ("tool_call", 0, "project:write-file")
    assert json.loads(heard[1][3]) == {"path": "a.py", "content": "<script>A = 1</script>\n"}
    assert heard[2][:3] == ("tool_result", 0, "project:write-file") and "a.py" in heard[2][3]
    assert heard[3:] == [("text", 1, "", "done")]
    first_turn = next(i for i, e in enumerate(events) if isinstance(e, AgentTurnCompleted))
    tool_call = next(i for i, e in enumerate(events) if isinstance(e, AgentActivity) and e.activity == "tool_call")
    assert tool_call < first_turn  # told while the turn was still going, not when it ended


def test_codexs_text_and_tool_calls_are_told_as_its_stream_shows_them(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from orchestra_core.model.events import AgentActivity
    from tests.support.cli_agents import codex_binary, codex_env, codex_provider_args
    from tests.support.fake_provider_api import FakeOpenAIResponsesAPI

    graph = parse_pipeline(
        'digraph g { start [shape=Mdiamond]; exit [shape=Msquare]; impl [prompt="x"]; start -> impl -> exit }'
    )
    settings = OrchestraSettings(workspace=WorkspaceSettings(repos={"project": RepoSettings(path=str(project))}))
    events: list[object] = []
    write = ToolUse("mcp__orchestra__project__write_file", {"path": "a.py", "content": "<i>A</i> = 1\n"})
    with FakeOpenAIResponsesAPI([Reply("Writing <b>a.py</b>", [write]), Reply("done")]) as api:
        arguments = tuple(codex_provider_args(api.base_url))

        def factory(runtime: AgentRuntime) -> CLIAgentBackend:
            return create_cli_backend("codex", CliAgentSettings(command=str(codex_binary()), args=arguments), runtime)

        for key, value in codex_env(api.base_url, tmp_path / "home").items():
            monkeypatch.setenv(key, value)
        result = run_pipeline(
            graph, settings=settings, project_root=project, git=SubprocessGit(), backend=factory, on_event=events.append
        )
    assert result.succeeded, result.failure_reason
    heard = [(e.activity, e.tool, e.text) for e in events if isinstance(e, AgentActivity)]
    calls = [(tool, json.loads(text)) for kind, tool, text in heard if kind == "tool_call"]
    assert calls == [("project:write-file", {"path": "a.py", "content": "<i>A</i> = 1\n"})]
    assert ("text", "", "Writing <b>a.py</b>") in heard and heard[-1] == ("text", "", "done")
    assert [kind for kind, _tool, _text in heard].index("tool_call") < [k for k, _t, _x in heard].index("tool_result")
    first_turn = next(i for i, e in enumerate(events) if isinstance(e, AgentTurnCompleted))
    tool_call = next(i for i, e in enumerate(events) if isinstance(e, AgentActivity) and e.activity == "tool_call")
    assert tool_call < first_turn
