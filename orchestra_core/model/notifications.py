"""What a run tells the people watching it (`notify:` in orchestra.yaml): the events, and what each one says."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from attrs import field, frozen

from orchestra_core.model.immutable import any_tuple
from orchestra_core.model.interview import Option
from orchestra_core.model.money import CostTally

QUESTION_TEXT_LIMIT = 3000  # characters of a waiting question's text a notification carries


class NotifyEvent(StrEnum):
    """The events a notification target can ask for (`notify[i].events`)."""

    FINISHED = "finished"  # the run succeeded
    FAILED = "failed"  # the run failed (a node, a goal gate, a crash)
    NEEDS_INPUT = "needs_input"  # a human gate or an interactive node waits for an answer
    BUDGET_EXCEEDED = "budget_exceeded"  # a budget stopped the run
    CANCELLED = "cancelled"  # `orchestra cancel`, or a cancel over HTTP
    INTERRUPTED = "interrupted"  # Ctrl-C or a stop while it ran; `orchestra resume` continues it


NOTIFY_EVENTS: tuple[str, ...] = tuple(event.value for event in NotifyEvent)

_EVENT_AT_END = {
    "success": NotifyEvent.FINISHED,
    "fail": NotifyEvent.FAILED,
    "budget_exceeded": NotifyEvent.BUDGET_EXCEEDED,
    "cancelled": NotifyEvent.CANCELLED,
    "interrupted": NotifyEvent.INTERRUPTED,
}


def event_at_end(status: str) -> NotifyEvent | None:
    """The event a run that ends with this session status sends (`success` -> `finished`, `fail` -> `failed`,
    `budget_exceeded`, `cancelled`, `interrupted`); None for a status that is no end (`running`)."""
    return _EVENT_AT_END.get(status)


@frozen
class AnswerRoutes:
    """Where a question a run waits on can be answered, as `needs_input` notifications name it.

    Attributes:
        attach: `orchestra attach SESSION` answers it (a run in a terminal, whose console publishes its waits).
        server_url: The address of an `orchestra serve` whose page of the session (`/view/SESSION`) answers it.
    """

    attach: bool = False
    server_url: str | None = None

    def command(self, session_id: str) -> str | None:
        """The command that answers, or None."""
        return f"orchestra attach {session_id}" if self.attach else None

    def page(self, session_id: str) -> str | None:
        """The session's page on the server, or None."""
        return f"{self.server_url.rstrip('/')}/view/{session_id}" if self.server_url else None


def _cut(text: str) -> str:
    return text if len(text) <= QUESTION_TEXT_LIMIT else text[: QUESTION_TEXT_LIMIT - 1] + "…"


@frozen(kw_only=True)
class WaitingQuestion:
    """A question a run waits on, and how to answer it.

    Attributes:
        node_id: The node asking (a human gate, an interactive node).
        text: The question (an interactive node's: the agent's reply), cut to QUESTION_TEXT_LIMIT characters.
        type: `multiple_choice`, `yes_no`, `confirmation`, `freeform`, or `chat` (an interactive node).
        options: The choices (a chat's: the commands that end it; any other text is the next message).
        answer_command: The command that answers it (`orchestra attach 7`), or None.
        answer_url: The page that answers it (`http://127.0.0.1:8765/view/7`), or None.
    """

    node_id: str
    text: str = field(converter=_cut)
    type: str
    options: tuple[Option, ...] = field(default=(), converter=any_tuple)
    answer_command: str | None = None
    answer_url: str | None = None


@frozen(kw_only=True)
class Notification:
    """One event of a run, for its notification targets.

    Attributes:
        event: What happened.
        session_id: The run's session.
        pipeline: The pipeline's name.
        status: The session's status as of the event (`running` while a question waits; else how it ended).
        timestamp: When (UTC).
        cost: What the session has cost so far (its earlier runs, branches and replayed history included).
        failure_reason: Why it failed, was stopped or cancelled (None when it did not).
        question: What waits for an answer (`needs_input` only).
        resume_command: The command that continues the session (after a failure, a budget stop, a cancel or an
            interruption), or None.
    """

    event: NotifyEvent
    session_id: str
    pipeline: str
    status: str
    timestamp: datetime
    cost: CostTally = field(factory=CostTally)
    failure_reason: str | None = None
    question: WaitingQuestion | None = None
    resume_command: str | None = None


