"""An interactive node whose backend cannot continue its agent state (AgentStateLost): the conversation is
replayed in a new prompt, with a StageWarning when the state was expected to continue."""

from __future__ import annotations

from typing import Any

import pytest

from orchestra_core.handlers.interactive import InteractiveChat
from orchestra_core.model.agent_resume import AgentStateLost, agent_resume_for
from orchestra_core.model.chat import ChatTurn
from orchestra_core.model.context import Context
from orchestra_core.model.events import StageWarning
from orchestra_core.model.graph import Node
from orchestra_core.model.turn import AgentTurn
from orchestra_core.ports.codergen_backend import OnTurn
from orchestra_core.testing.clock import ManualClock

NODE = Node("chat")


class _Stage:
    """The parts of a StageRun the chat uses: its session, events and the engine's clock."""

    session_id = "s1"

    def __init__(self) -> None:
        self.events: list[tuple[type, dict[str, Any]]] = []
        self.engine = type("Engine", (), {"clock": ManualClock()})()

    def emit(self, event_type: type, **fields: Any) -> None:
        self.events.append((event_type, fields))


class _Human:
    def __init__(self, *messages: str) -> None:
        self._messages = list(messages)

    def reply(self, turn: ChatTurn) -> str:
        return self._messages.pop(0)


class _Backend:
    """Replies "reply N"; records every prompt and resume point; a resumed call raises AgentStateLost."""

    def __init__(self, *, warn: bool) -> None:
        self.warn = warn
        self.calls: list[tuple[str, bool]] = []

    def __call__(self, node: Node, prompt: str, context: Context, on_turn: OnTurn | None) -> str:
        resume = agent_resume_for(node.id, context)
        context.remove("internal.resume_node")  # the codergen caller spends the resume point
        self.calls.append((prompt, resume is not None))
        if resume is not None:
            raise AgentStateLost("claude-code could not resume its session abc", warn=self.warn)
        reply = f"reply {len(self.calls)}"
        if on_turn is not None:
            on_turn(
                AgentTurn(
                    node_id=node.id, turn_number=0, model="m", provider="p", agent_state_ref="claude-code:abc"
                )
            )
        return reply


@pytest.mark.parametrize("warn", [True, False])
def test_a_lost_agent_state_replays_the_conversation_in_a_new_prompt(warn: bool) -> None:
    backend = _Backend(warn=warn)
    stage = _Stage()
    chat = InteractiveChat(backend, _Human("Make it shorter", "/done"))
    result = chat.run(NODE, "Summarize", Context(), stage, on_turn=None)  # type: ignore[arg-type]

    assert result == "reply 3"
    assert [(prompt.splitlines()[0], resumed) for prompt, resumed in backend.calls] == [
        ("Summarize", False),
        ("Make it shorter", True),
        ("Summarize", False),
    ]
    replayed = backend.calls[2][0]
    assert "### You\nreply 1" in replayed and "### Human\nMake it shorter" in replayed
    warnings = [fields for kind, fields in stage.events if kind is StageWarning]
    if warn:
        assert warnings == [
            {
                "node_id": "chat",
                "message": "claude-code could not resume its session abc; the conversation so far is "
                "replayed in a new prompt",
            }
        ]
    else:
        assert warnings == []
