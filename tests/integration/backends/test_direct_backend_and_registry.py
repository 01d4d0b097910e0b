"""DirectLLMBackend (one call, no tools, no turns), the backend registry, and the port all backends share."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from orchestra_adapters.backends.direct_backend import DirectLLMBackend
from orchestra_adapters.backends.langgraph_backend import LangGraphBackend
from orchestra_adapters.backends.registry import BACKEND_NAMES, UnknownBackendError, create_backend
from orchestra_adapters.llm.chat_model_factory import LangChainChatModelFactory
from orchestra_core.model.context import Context
from orchestra_core.model.graph import Node
from orchestra_core.model.outcome import Outcome, StageStatus
from orchestra_core.model.settings import OrchestraSettings
from orchestra_core.model.turn import AgentTurn
from orchestra_core.ports.codergen_backend import CodergenBackend

from .conftest import RepoToolset, StaticResolver

Settings = Callable[[str], OrchestraSettings]


def _direct(settings: OrchestraSettings) -> DirectLLMBackend:
    return DirectLLMBackend(LangChainChatModelFactory(settings, environ={}), StaticResolver())


def test_direct_makes_one_call_reported_as_one_turn_that_writes_nothing(write_cassette: Settings) -> None:
    backend = _direct(
        write_cassette(
            "nodes:\n  summarize:\n    - content: 'Three findings.'\n      tool_calls: [{name: 'x:y'}]\n    - unused\n"
        )
    )
    turns: list[AgentTurn] = []
    result = backend.run(Node("summarize"), "Summarize the reviews.", Context(), turns.append)
    assert result == "Three findings."
    # the call is a turn (what it cost is recorded and counts toward budgets); no tools ran, nothing was written
    [turn] = turns
    assert (turn.node_id, turn.turn_number, turn.tool_calls, turn.files_written) == ("summarize", 0, (), ())
    assert [m["role"] for m in turn.messages] == ["user", "assistant"] and turn.messages[1]["content"] == "Three findings."
    usage = backend.usage.for_node("summarize")
    assert usage.model_calls == 1 and usage.turns == 1 and turn.token_usage == usage.tokens
    assert usage.tokens.prompt_tokens == 6  # "Summarize the reviews." is 22 characters, about 6 tokens
    assert usage.tokens.completion_tokens > 0 and usage.duration_s >= 0


def test_direct_provider_errors_become_outcomes(write_cassette: Settings) -> None:
    backend = _direct(
        write_cassette(
            "nodes:\n  n:\n    - {error: 'server error', status_code: 503}\n    - {error: bad request, status_code: 400}\n"
        )
    )
    retry = backend.run(Node("n"), "Go.", Context())
    fail = backend.run(Node("n"), "Go.", Context())
    assert isinstance(retry, Outcome) and retry.status == StageStatus.RETRY
    assert retry.failure_reason == "scripted model scripted-sonnet failed (HTTP 503): server error"
    assert isinstance(fail, Outcome) and fail.status == StageStatus.FAIL
    assert backend.usage.for_node("n").model_calls == 2


def test_registry_builds_each_backend_by_name(write_cassette: Settings, tmp_path: Path, repo) -> None:
    settings = write_cassette("default: hi\n")
    parts = {
        "chat_models": LangChainChatModelFactory(settings, environ={}),
        "resolver": StaticResolver(),
        "toolset": RepoToolset(repo),
        "state_path": tmp_path / "agents.db",
    }
    assert BACKEND_NAMES == ("simulate", "langgraph", "direct", "claude-code", "codex", "acp")
    assert create_backend("simulate", **parts) is None
    assert isinstance(create_backend("direct", **parts), DirectLLMBackend)
    langgraph = create_backend("langgraph", **parts)
    assert isinstance(langgraph, LangGraphBackend)
    assert isinstance(create_backend("", **parts), LangGraphBackend)
    with pytest.raises(
        UnknownBackendError,
        match="unknown backend 'claude'; choose one of: simulate, langgraph, direct, claude-code, codex, acp",
    ):
        create_backend("claude", **parts)
    langgraph.close()


@pytest.mark.parametrize("name", ["langgraph", "direct"])
def test_every_backend_conforms_to_the_port(
    name: str, write_cassette: Settings, tmp_path: Path, repo
) -> None:
    settings = write_cassette("default: The answer.\n")
    backend = create_backend(
        name,
        chat_models=LangChainChatModelFactory(settings, environ={}),
        resolver=StaticResolver(),
        toolset=RepoToolset(repo),
        state_path=tmp_path / "agents.db",
    )
    assert isinstance(backend, CodergenBackend)
    assert backend.run(Node("any"), "Question?", Context({"internal.session_id": "s"}), None) == "The answer."
    assert backend.run(Node("any"), "Question?", Context({"internal.session_id": "s"})) == "The answer."
    if isinstance(backend, LangGraphBackend):
        backend.close()


def test_registry_passes_tool_hooks_to_the_langgraph_backend(
    write_cassette: Settings, tmp_path: Path, repo
) -> None:
    from orchestra_adapters.process.command_runner import SubprocessCommandRunner
    from orchestra_core.agents.hooks import ToolHooks

    settings = write_cassette("nodes:\n  n:\n    - tool_calls: [{name: 'project:list-files'}]\n    - ok\n")
    turns: list = []
    backend = create_backend(
        "langgraph",
        chat_models=LangChainChatModelFactory(settings, environ={}),
        resolver=StaticResolver(),
        toolset=RepoToolset(repo),
        state_path=tmp_path / "agents.db",
        tool_hooks=lambda node, context: ToolHooks(
            SubprocessCommandRunner(), pre="exit 1", cwd=str(tmp_path)
        ),
    )
    assert backend is not None
    backend.run(Node("n"), "Go.", Context(), turns.append)
    assert "blocked by the tool_hooks.pre hook" in (turns[0].tool_calls[0].error or "")
