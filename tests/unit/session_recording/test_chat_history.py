"""chat_history (session/conversation.py): what a resumed interactive node does first, read from the turns
after the session's latest checkpoint."""

from __future__ import annotations

from orchestra_core.model import records as r
from orchestra_core.model.chat import ANSWERED, CONTINUE, SEND, START
from orchestra_core.model.turn import AgentTurn, ToolCall
from orchestra_core.ports.session_store import SessionMetadata
from orchestra_core.session.api import append_record
from orchestra_core.session.conversation import chat_history
from orchestra_core.testing.session_store import InMemorySessionStore


def _session(*records: object) -> tuple[InMemorySessionStore, str]:
    store = InMemorySessionStore()
    session = store.create_session(SessionMetadata(pipeline="p")).session_id
    for record in records:
        append_record(store, session, record)
    return store, session


def _turn(number: int, reply: str, *, tools: bool = False, node: str = "synth") -> AgentTurn:
    calls = [ToolCall(name="project:read-file", args={"path": "a"})] if tools else []
    return AgentTurn(
        node_id=node,
        turn_number=number,
        model="m",
        provider="scripted",
        messages=[{"role": "assistant", "content": reply}],
        tool_calls=calls,
        agent_state_ref=f"langgraph:t:{number}",
    )


def _said(message: str, agent: str, node: str = "synth") -> r.HumanInteraction:
    return r.HumanInteraction(node, r.InteractionMode.INTERACTIVE, agent, answer=message)


def test_nothing_recorded_is_a_fresh_start() -> None:
    store, session = _session()
    assert chat_history(store, session, "synth").next_step == START


def test_a_reply_waiting_for_the_human_is_shown_again() -> None:
    store, session = _session(_turn(0, "Draft one"), _said("Shorter", "Draft one"), _turn(1, "Draft two"))
    history = chat_history(store, session, "synth")
    assert (history.next_step, history.agent_message) == (ANSWERED, "Draft two")
    assert history.exchanges == (("Draft one", "Shorter"),)
    assert (history.turn_number, history.agent_state_ref) == (1, "langgraph:t:1")


def test_a_message_the_agent_never_answered_is_sent_again() -> None:
    store, session = _session(_turn(0, "Draft one"), _said("Shorter", "Draft one"))
    history = chat_history(store, session, "synth")
    assert history.next_step == SEND and history.turn_number == 0


def test_an_agent_stopped_between_tool_calls_continues() -> None:
    store, session = _session(
        _turn(0, "Draft one"), _said("Shorter", "Draft one"), _turn(1, "Reading", tools=True)
    )
    assert chat_history(store, session, "synth").next_step == CONTINUE


def test_only_this_node_since_the_latest_checkpoint_counts() -> None:
    gate = r.HumanInteraction("synth", r.InteractionMode.GATE, "Ship?", answer="yes")
    store, session = _session(
        _turn(0, "Old"),
        _said("old message", "Old"),
        r.CheckpointRecord(current_node="synth"),
        _turn(0, "Other node", node="other"),
        gate,
        _turn(0, "Draft one"),
    )
    history = chat_history(store, session, "synth")
    assert (history.next_step, history.agent_message, history.exchanges) == (ANSWERED, "Draft one", ())


def test_a_conversation_ended_by_the_human_is_not_sent_to_the_agent_again() -> None:
    # /reject fails the node; its retry (or a resume before the node's checkpoint) starts a new conversation
    store, session = _session(_turn(0, "Draft one"), _said("/reject", "Draft one"))
    history = chat_history(store, session, "synth")
    assert (history.next_step, history.exchanges, history.turn_number) == (START, (), -1)


def test_a_retry_after_an_ended_conversation_resumes_its_own_conversation() -> None:
    store, session = _session(
        _turn(0, "Draft one"), _said("/Done ", "Draft one"), _turn(0, "Draft again"), _said("Shorter", "Draft again")
    )
    history = chat_history(store, session, "synth")
    assert (history.next_step, history.exchanges) == (SEND, (("Draft again", "Shorter"),))
