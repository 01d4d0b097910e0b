"""Interactive mode values: the conversation inside an interactive codergen node and its end commands."""

from __future__ import annotations

from collections.abc import Iterable

from attrs import field, frozen

DONE = "/done"
APPROVE = "/approve"
REJECT = "/reject"
END_COMMANDS = (DONE, APPROVE, REJECT)
# Marks a Question (metadata "mode") as a turn of an interactive conversation rather than a gate.
INTERACTIVE_MODE = "interactive"


def end_command(message: str) -> str | None:
    """The end command a human message is (`/done`, `/approve`, `/reject`, any case), else None."""
    word = message.strip().lower()
    return word if word in END_COMMANDS else None


Exchange = tuple[str, str]  # (what the agent said, what the human answered)

# What a resumed conversation does first: nothing recorded yet (start), the agent's reply waits for the
# human (answered), the human's last message got no agent turn (send it again), the agent was mid-loop
# after it (continue).
START, ANSWERED, SEND, CONTINUE = "start", "answered", "send", "continue"


def _exchanges(items: Iterable[Iterable[str]]) -> tuple[Exchange, ...]:
    pairs = [tuple(str(part) for part in item) for item in items]
    return tuple((pair[0], pair[1]) for pair in pairs)


@frozen
class ChatTurn:
    """What a human is shown when it is their turn to speak in an interactive node.

    Attributes:
        node_id: The interactive node.
        agent_message: The agent's latest reply.
        exchanges: The conversation so far: (agent message, human answer) pairs, oldest first.
    """

    node_id: str
    agent_message: str
    exchanges: tuple[Exchange, ...] = field(default=(), converter=_exchanges)

    @property
    def index(self) -> int:
        """The position of the message asked for among the node's human messages (0 for the first)."""
        return len(self.exchanges)


@frozen
class ChatHistory:
    """The conversation an interrupted run left in an interactive node (restored on resume).

    Attributes:
        exchanges: The (agent message, human answer) pairs recorded, oldest first.
        next_step: START, ANSWERED, SEND or CONTINUE (see above).
        agent_message: The agent's reply that waits for the human (ANSWERED).
        turn_number: The node's last recorded agent turn (-1: none).
        agent_state_ref: That turn's agent state, for backends that continue a conversation.
    """

    exchanges: tuple[Exchange, ...] = field(default=(), converter=_exchanges)
    next_step: str = START
    agent_message: str = ""
    turn_number: int = -1
    agent_state_ref: str | None = None
