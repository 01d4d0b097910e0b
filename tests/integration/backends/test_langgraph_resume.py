"""LangGraphBackend continuing a node's agent after a recorded turn (`resume --turn`): the conversation up to
and including that turn is what the next model call sees, and turns are numbered on from it."""

from __future__ import annotations

from collections.abc import Callable

from orchestra_adapters.backends.langgraph_backend import LangGraphBackend
from orchestra_core.model.agent_resume import AgentResume
from orchestra_core.model.context import Context
from orchestra_core.model.graph import Node
from orchestra_core.model.outcome import Outcome, StageStatus
from orchestra_core.model.turn import AgentTurn
from tests.integration.backends.test_langgraph_backend import THREE_TURNS, run_context

Backend = Callable[..., LangGraphBackend]
PROMPT = "Add a hello script."


def first_run(make_backend: Backend) -> list[AgentTurn]:
    turns: list[AgentTurn] = []
    assert make_backend(THREE_TURNS).run(Node("implement"), PROMPT, run_context(), turns.append) == (
        "Done: hello.py prints a greeting."
    )
    return turns


def resumed_context(turn: AgentTurn, **values: object) -> Context:
    resume = AgentResume(turn.node_id, turn.turn_number, turn.agent_state_ref)
    return run_context(**resume.context_values(), **values)


def test_the_agent_continues_after_the_turn_with_the_conversation_so_far(make_backend: Backend) -> None:
    turns = first_run(make_backend)
    backend = make_backend('nodes:\n  implement: ["Continuing from the first look."]\n')
    again: list[AgentTurn] = []

    result = backend.run(Node("implement"), PROMPT, resumed_context(turns[0]), again.append)

    assert result == "Continuing from the first look."
    assert [turn.turn_number for turn in again] == [1]
    saved = backend.agent_messages(again[0].agent_state_ref or "") or []
    # the prompt, turn 0's reply and its two tool results, then the new reply; turn 1 and 2 are not there
    assert [m["role"] for m in saved] == ["user", "assistant", "tool", "tool", "assistant"]
    assert saved[0]["content"] == PROMPT and saved[1]["content"] == "Let me look around first."
    assert saved[-1]["content"] == "Continuing from the first look."
    # the model was given the conversation the original turn 1 was given (the same prompt size)
    assert again[0].token_usage.prompt_tokens == turns[1].token_usage.prompt_tokens
    assert again[0].agent_state_ref != turns[1].agent_state_ref


def test_a_turn_that_ended_the_loop_ends_the_node_again_without_a_model_call(make_backend: Backend) -> None:
    turns = first_run(make_backend)
    backend = make_backend("nodes:\n  implement: []\n")  # any model call would fail: nothing left to play
    again: list[AgentTurn] = []

    result = backend.run(Node("implement"), PROMPT, resumed_context(turns[2]), again.append)

    assert result == "Done: hello.py prints a greeting." and again == []


def test_unusable_agent_state_fails_the_node_naming_it(make_backend: Backend) -> None:
    backend = make_backend('default: "unused"\n')
    foreign = AgentResume("implement", 3, "claude-code:abc").context_values()
    result = backend.run(Node("implement"), PROMPT, run_context(**foreign))
    assert isinstance(result, Outcome) and result.status == StageStatus.FAIL
    assert "claude-code:abc" in (result.failure_reason or "")

    missing = AgentResume("implement", 3, "langgraph:session-1/implement/x:no-such-checkpoint").context_values()
    result = backend.run(Node("implement"), PROMPT, run_context(**missing))
    assert isinstance(result, Outcome) and result.status == StageStatus.FAIL
    assert "no-such-checkpoint" in (result.failure_reason or "")


def test_a_resume_point_for_another_node_is_ignored(make_backend: Backend) -> None:
    turns = first_run(make_backend)
    backend = make_backend('nodes:\n  review: ["Fresh start."]\n')
    again: list[AgentTurn] = []

    assert backend.run(Node("review"), "Review it.", resumed_context(turns[0]), again.append) == "Fresh start."
    assert [turn.turn_number for turn in again] == [0]
    assert len(backend.agent_messages(again[0].agent_state_ref or "") or []) == 2
