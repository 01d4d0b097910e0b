"""Failover in the LangGraph and direct backends with the scripted provider: the primary model's replies are
`error:`s, a fallback of another provider answers, and the agent goes on with its conversation."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from orchestra_adapters.backends.direct_backend import DirectLLMBackend
from orchestra_adapters.backends.langgraph_backend import LangGraphBackend
from orchestra_adapters.llm.chat_model_factory import LangChainChatModelFactory
from orchestra_core.agents.repo_context import RepoContext
from orchestra_core.model.context import Context
from orchestra_core.model.failover import LAST_ATTEMPT, ModelFailover
from orchestra_core.model.graph import Node
from orchestra_core.model.outcome import Outcome, StageStatus
from orchestra_core.model.settings import OrchestraSettings, ProviderSettings, ProvidersSettings
from orchestra_core.model.turn import AgentTurn
from tests.integration.backends.conftest import RepoToolset, StaticResolver

CREDIT = "{error: 'Your credit balance is too low to access the API', status_code: 402}"
REASON = "scripted scripted-sonnet: credit or quota used up (HTTP 402): Your credit balance is too low to access the API"


def settings(tmp_path: Path, cassette: str) -> OrchestraSettings:
    """`scripted-sonnet` (the `worker` of `scripted`) falls back to `backup-sonnet` of the provider `backup`; both
    play the same cassette, so the node's replies go on in order whichever model asks."""
    (tmp_path / "cassette.yaml").write_text(cassette, encoding="utf-8")
    primary = ProviderSettings(
        models={"worker": "scripted-sonnet"}, fallbacks={"worker": ("backup:backup-sonnet",)}, cassette="cassette.yaml"
    )
    backup = ProviderSettings(cassette="cassette.yaml")
    return OrchestraSettings(
        providers=ProvidersSettings("scripted", {"scripted": primary, "backup": backup}),
        source_path=tmp_path / "orchestra.yaml",
    )


@pytest.fixture
def langgraph(tmp_path: Path, repo: RepoContext) -> Callable[[str], LangGraphBackend]:
    made: list[LangGraphBackend] = []

    def make(cassette: str) -> LangGraphBackend:
        factory = LangChainChatModelFactory(settings(tmp_path, cassette), environ={})
        backend = LangGraphBackend(factory, StaticResolver(), RepoToolset(repo), tmp_path / "agents.db")
        made.append(backend)
        return backend

    yield make
    for backend in made:
        backend.close()


def context(*, last_attempt: bool = True) -> Context:
    return Context({"internal.session_id": "s1", "internal.fidelity": "compact", LAST_ATTEMPT: last_attempt})


def test_the_agent_goes_on_with_a_fallback_mid_conversation_and_its_turns_say_so(
    langgraph: Callable[[str], LangGraphBackend], repo: RepoContext
) -> None:
    backend = langgraph(
        "nodes:\n  implement:\n"
        "    - {content: 'Writing a.', tool_calls: [{name: 'project:write-file', args: {path: a.py, content: 'A = 1'}}]}\n"
        f"    - {CREDIT}\n"
        "    - {content: 'Writing b.', tool_calls: [{name: 'project:write-file', args: {path: b.py, content: 'B = 2'}}]}\n"
        "    - Both written.\n"
    )
    turns: list[AgentTurn] = []
    heard: list[ModelFailover] = []
    result = backend.run(Node("implement"), "Write a and b.", context(last_attempt=False), turns.append, on_failover=heard.append)
    assert result == "Both written."
    assert (repo.root / "a.py").exists() and (repo.root / "b.py").exists()
    assert [(t.model, t.provider, t.requested_model, t.fallback_reason) for t in turns] == [
        ("scripted-sonnet", "scripted", "", ""),
        ("backup-sonnet", "backup", "scripted-sonnet", REASON),
        ("backup-sonnet", "backup", "scripted-sonnet", REASON),
    ]
    assert heard == [
        ModelFailover(
            node_id="implement", from_provider="scripted", from_model="scripted-sonnet", to_provider="backup",
            to_model="backup-sonnet", cause="credit", reason="HTTP 402: Your credit balance is too low to access the API",
        )
    ]  # fmt: skip
    # One conversation: the fallback continued the thread (the prompt once, turn 0's call still in it)
    conversation = backend.agent_messages(turns[-1].agent_state_ref or "") or []
    assert [m["content"] for m in conversation if m["role"] == "user"] == ["Write a and b."]
    assert conversation[1]["tool_calls"][0]["args"] == {"path": "a.py", "content": "A = 1"}
    assert turns[1].token_usage.prompt_tokens > turns[0].token_usage.prompt_tokens


def test_a_bad_request_does_not_switch(langgraph: Callable[[str], LangGraphBackend]) -> None:
    backend = langgraph("nodes:\n  n:\n    - {error: 'messages: roles must alternate', status_code: 400}\n    - unused\n")
    heard: list[ModelFailover] = []
    outcome = backend.run(Node("n"), "Go.", context(), on_failover=heard.append)
    assert isinstance(outcome, Outcome) and outcome.status is StageStatus.FAIL
    assert outcome.failure_reason == "scripted model scripted-sonnet failed (HTTP 400): messages: roles must alternate"
    assert heard == []


def test_an_overloaded_model_is_retried_first_and_fails_over_on_the_last_attempt(
    langgraph: Callable[[str], LangGraphBackend],
) -> None:
    backend = langgraph("nodes:\n  n:\n    - {error: Overloaded, status_code: 529}\n    - {error: Overloaded, status_code: 529}\n    - Done.\n")
    outcome = backend.run(Node("n"), "Go.", context(last_attempt=False))
    assert isinstance(outcome, Outcome) and outcome.status is StageStatus.RETRY
    assert outcome.failure_reason == "scripted model scripted-sonnet failed (HTTP 529): Overloaded"
    turns: list[AgentTurn] = []
    assert backend.run(Node("n"), "Go.", context(last_attempt=True), turns.append) == "Done."
    assert [(t.model, t.fallback_reason) for t in turns] == [
        ("backup-sonnet", "scripted scripted-sonnet: unavailable after the node's retries (HTTP 529): Overloaded")
    ]


def test_when_every_model_fails_the_node_fails_naming_each(langgraph: Callable[[str], LangGraphBackend]) -> None:
    backend = langgraph(f"nodes:\n  n:\n    - {CREDIT}\n    - {{error: 'model: backup-sonnet', status_code: 404}}\n")
    outcome = backend.run(Node("n"), "Go.", context())
    assert isinstance(outcome, Outcome) and outcome.status is StageStatus.FAIL
    assert outcome.failure_reason == (
        f"every model failed: {REASON}; backup backup-sonnet: model not available (HTTP 404): model: backup-sonnet"
    )


def test_the_direct_backend_fails_over_too(tmp_path: Path) -> None:
    factory = LangChainChatModelFactory(
        settings(tmp_path, "nodes:\n  review:\n    - {error: 'invalid x-api-key', status_code: 401}\n    - Looks good.\n"),
        environ={},
    )
    heard: list[ModelFailover] = []
    backend = DirectLLMBackend(factory, StaticResolver())
    assert backend.run(Node("review"), "Review.", context(), on_failover=heard.append) == "Looks good."
    assert [(f.cause, f.to_provider, f.to_model) for f in heard] == [("auth", "backup", "backup-sonnet")]


def test_a_watched_agent_streams_through_failover_and_the_fallback_goes_on(
    langgraph: Callable[[str], LangGraphBackend],
) -> None:
    """Streamed (someone watches), a model that fails before its first chunk gives way as an invoked one does; only
    the fallback's words are heard."""
    from orchestra_core.model.activity import Activity

    backend = langgraph(f"nodes:\n  implement:\n    - {CREDIT}\n    - Written by the backup.\n")
    turns: list[AgentTurn] = []
    heard: list[Activity] = []
    result = backend.run(Node("implement"), "Write.", context(last_attempt=False), turns.append, on_activity=heard.append)
    assert result == "Written by the backup."
    assert "".join(activity.text for activity in heard if activity.kind == "text") == "Written by the backup."
    assert len([activity for activity in heard if activity.kind == "text"]) > 1  # streamed
    assert [(t.model, t.requested_model, t.fallback_reason) for t in turns] == [("backup-sonnet", "scripted-sonnet", REASON)]
