"""Conversation port: the human side of an interactive codergen node (seed 003, chat-style interactive mode)."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from orchestra_core.model.chat import ChatTurn


@runtime_checkable
class Conversation(Protocol):
    """A frontend where a human chats with an interactive node's agent: the terminal, an answers file, HTTP.

    An Interviewer that also has `reply` holds conversations; one without it (auto-approve) lets interactive
    nodes run autonomously.
    """

    def reply(self, turn: ChatTurn) -> str:
        """Show the agent's reply and wait for the human's next message.

        Returns:
            The message; `/done` (end with the agent's last outcome), `/approve` (success) or `/reject`
            (fail) end the conversation. A human who leaves (end of input, no more scripted replies) is
            `/done`.
        """
        ...
