"""The conversation an interrupted run left in an interactive node, read back from the session store.

Every human message of an interactive node is a `HumanInteraction` turn (mode interactive) written before
the agent sees it, and the node's agent turns follow it; no checkpoint is taken inside a node, so the turns
after the session's latest checkpoint are the conversation of the node being run.
"""

from __future__ import annotations

from orchestra_core.model import records as r
from orchestra_core.model.chat import ANSWERED, CONTINUE, SEND, START, ChatHistory, Exchange, end_command
from orchestra_core.model.turn import AgentTurn
from orchestra_core.ports.session_store import SessionStore
from orchestra_core.session.api import history
from orchestra_core.session.catalog import AGENT_TURN, CHECKPOINT, HUMAN_INTERACTION
from orchestra_core.session.codec import decode_record


def chat_history(store: SessionStore, session_id: str, node_id: str) -> ChatHistory:
    """The node's conversation since the session's latest checkpoint (an empty START when there is none)."""
    entries: list[object] = []
    for stored in history(store, session_id, page_size=64):
        if stored.type_id == CHECKPOINT.type_id:
            break
        if stored.type_id in (AGENT_TURN.type_id, HUMAN_INTERACTION.type_id):
            record = decode_record(stored)
            if _of_node(record, node_id):
                entries.append(record)
    entries.reverse()
    return _history(entries)


def _of_node(record: object, node_id: str) -> bool:
    if isinstance(record, AgentTurn):
        return record.node_id == node_id
    return (
        isinstance(record, r.HumanInteraction)
        and record.node_id == node_id
        and record.mode is r.InteractionMode.INTERACTIVE
    )


def _history(entries: list[object]) -> ChatHistory:
    exchanges: list[Exchange] = []
    turns_since: list[AgentTurn] = []
    last: AgentTurn | None = None
    for entry in entries:
        if isinstance(entry, r.HumanInteraction):
            exchanges.append((entry.question, entry.answer or ""))
            turns_since = []
            if end_command(entry.answer or ""):  # that conversation ended (a retry starts a new one)
                exchanges, last = [], None
        else:
            assert isinstance(entry, AgentTurn)
            turns_since.append(entry)
            last = entry
    number, state = (last.turn_number, last.agent_state_ref) if last is not None else (-1, None)
    if not turns_since:
        step = SEND if exchanges else START
        return ChatHistory(exchanges, step, turn_number=number, agent_state_ref=state)
    final = turns_since[-1]
    if final.tool_calls:
        return ChatHistory(exchanges, CONTINUE, turn_number=number, agent_state_ref=state)
    return ChatHistory(exchanges, ANSWERED, _reply_of(final), number, state)


def _reply_of(turn: AgentTurn) -> str:
    """The text of the turn's last assistant message."""
    for message in reversed(turn.messages):
        if message.get("role") in ("assistant", "ai"):
            return str(message.get("content") or "")
    return ""
