"""Resuming an agent inside a node: the context keys that ask a codergen backend to continue a recorded turn.

`orchestra resume SESSION --turn T` (and `replay --turn`) restore the run to the checkpoint before T's node
and put these keys into the restored context. When the engine re-enters that node, a backend that can
continue agent state (LangGraph) reads them for that node only: it continues the conversation from
`internal.resume_agent_state` (the turn's `agent_state_ref`) and numbers its turns on from
`internal.resume_turn_number + 1`. The codergen handler removes the keys once the node's backend call
returns, so no later node, retry or checkpoint sees them. A backend without resumable state ignores them
and runs the node from its start. An interactive node continues its conversation the same way, with the
human's next message in `internal.resume_message` (added to the conversation before the agent goes on).
"""

from __future__ import annotations

from typing import Any

from attrs import frozen

from orchestra_core.model.context import Context
from orchestra_core.model.errors import OrchestraError

RESUME_NODE = "internal.resume_node"
RESUME_AGENT_STATE = "internal.resume_agent_state"
RESUME_TURN_NUMBER = "internal.resume_turn_number"
RESUME_MESSAGE = "internal.resume_message"
RESUME_KEYS = (RESUME_NODE, RESUME_AGENT_STATE, RESUME_TURN_NUMBER, RESUME_MESSAGE)


@frozen
class AgentResume:
    """Where a node's agent continues: after turn `turn_number`, from the agent state `agent_state_ref`
    (with the human's `message` added first, in an interactive node)."""

    node_id: str
    turn_number: int
    agent_state_ref: str | None = None
    message: str = ""

    def context_values(self) -> dict[str, Any]:
        """The context keys that carry this resume point to the node's backend."""
        return {
            RESUME_NODE: self.node_id,
            RESUME_AGENT_STATE: self.agent_state_ref or "",
            RESUME_TURN_NUMBER: self.turn_number,
            **({RESUME_MESSAGE: self.message} if self.message else {}),
        }


class AgentStateLost(OrchestraError):
    """A backend cannot continue the agent state it was asked to (a CLI agent's session files are gone, or the
    CLI keeps no session it can resume); the interactive node then replays the conversation in a new prompt.

    Attributes:
        warn: True when the state was expected to continue (the user is told); False when the backend never
            continues this kind of state (the replay is the normal way).
    """

    def __init__(self, message: str, *, warn: bool = True) -> None:
        super().__init__(message)
        self.warn = warn


def agent_resume_for(node_id: str, context: Context) -> AgentResume | None:
    """The resume point the context holds for this node (None when there is none, or it is another node's)."""
    if context.get(RESUME_NODE) != node_id:
        return None
    number = context.get(RESUME_TURN_NUMBER)
    if not isinstance(number, int) or isinstance(number, bool):
        return None
    state = context.get_string(RESUME_AGENT_STATE) or None
    return AgentResume(node_id, number, state, context.get_string(RESUME_MESSAGE))


def clear_agent_resume(context: Context) -> None:
    """Remove the resume keys (the node they were meant for has had its backend call)."""
    context.remove(*RESUME_KEYS)
