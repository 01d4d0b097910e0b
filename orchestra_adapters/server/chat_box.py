"""The chat of a run served here: the ChatBox its interactive nodes wait on and the interviewer that holds it
(server/chat.py serves it over HTTP)."""

from __future__ import annotations

import threading
from collections import deque
from typing import Any

from orchestra_adapters.server.questions import HttpInterviewer
from orchestra_core.model.chat import DONE, ChatTurn


class ChatBox:
    """The conversation of the interactive node a run served here is in: `reply` (the run's side) waits until
    `post` gives the human's message, or `cancel` (then `/done`)."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._one_at_a_time = threading.Lock()  # parallel interactive nodes take turns (a post is for the one shown)
        self._inbox: deque[str] = deque()
        self._cancelled = False
        self.node_id: str | None = None
        self.messages: list[dict[str, str]] = []
        self.waiting = False

    def reply(self, turn: ChatTurn) -> str:
        with self._one_at_a_time, self._changed:
            self.node_id = turn.node_id
            self.messages = [
                entry
                for agent, human in turn.exchanges
                for entry in ({"role": "agent", "text": agent}, {"role": "human", "text": human})
            ] + [{"role": "agent", "text": turn.agent_message}]
            self._inbox.clear()
            self.waiting = not self._cancelled
            self._changed.wait_for(lambda: bool(self._inbox) or self._cancelled)
            self.waiting = False
            message = self._inbox.popleft() if self._inbox else DONE
            self.messages.append({"role": "human", "text": message})
            return message

    def post(self, message: str) -> bool:
        """Give the waiting conversation its next message; False when nothing waits."""
        with self._changed:
            if not self.waiting or self._inbox:
                return False
            self._inbox.append(message)
            self._changed.notify_all()
            return True

    def cancel(self) -> None:
        """The run is cancelled: a waiting conversation ends (`/done`), and so will any later one."""
        with self._changed:
            self._cancelled = True
            self._changed.notify_all()

    def to_json(self) -> dict[str, Any]:
        with self._changed:
            return {"node_id": self.node_id, "waiting": self.waiting, "messages": list(self.messages)}


class HttpChatInterviewer(HttpInterviewer):
    """The server's interviewer: human gates as questions, interactive nodes through its `chat`."""

    def __init__(self) -> None:
        super().__init__()
        self.chat = ChatBox()

    def reply(self, turn: ChatTurn) -> str:
        return self.chat.reply(turn)

    def cancel(self) -> None:
        self.chat.cancel()
        super().cancel()
