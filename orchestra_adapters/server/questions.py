"""Human gates over HTTP: an Interviewer that parks each question until an answer is posted or the run is
cancelled."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Sequence
from typing import Any

from orchestra_core.interview import UnmatchedReplyError, answer_from_reply
from orchestra_core.model.interview import Answer, Option, Question, QuestionType

YES_NO_OPTIONS = (Option("Y", "Yes"), Option("N", "No"))


class UnknownAnswerError(ValueError):
    """The answer names none of the question's options (the message lists them)."""


class PendingQuestion:
    """One question waiting for its answer."""

    def __init__(self, question: Question) -> None:
        self.id = uuid.uuid4().hex[:12]
        self.question = question
        self.answer: Answer | None = None
        self.answered = threading.Event()

    @property
    def options(self) -> tuple[Option, ...]:
        if self.question.options:
            return self.question.options
        if self.question.type in (QuestionType.YES_NO, QuestionType.CONFIRMATION):
            return YES_NO_OPTIONS
        return ()

    def to_json(self) -> dict[str, Any]:
        """`{"id", "node_id", "text", "type", "options": [{"key", "label"}]}`."""
        return {
            "id": self.id,
            "node_id": self.question.stage,
            "text": self.question.text,
            "type": self.question.type.value,
            "options": [{"key": option.key, "label": option.label} for option in self.options],
        }


def answer_for(question: Question, reply: str) -> Answer:
    """The answer a reply gives, matched as `--answers` matches (`answer_from_reply`).

    Raises:
        UnknownAnswerError: The reply matches no option.
    """
    try:
        return answer_from_reply(question, reply)
    except UnmatchedReplyError as error:
        raise UnknownAnswerError(f"answer {reply!r} {error}") from None


class HttpInterviewer:
    """Parks each question in a list the server shows; `ask` blocks until `answer` is called for it, the
    question's timeout passes (its default, else a timeout answer) or `cancel` is called (skipped)."""

    def __init__(self) -> None:
        self._pending: dict[str, PendingQuestion] = {}
        self._lock = threading.Lock()
        self._cancelled = threading.Event()
        self.messages: list[tuple[str, str]] = []

    def pending(self) -> list[PendingQuestion]:
        with self._lock:
            return list(self._pending.values())

    def ask(self, question: Question) -> Answer:
        parked = PendingQuestion(question)
        with self._lock:  # checked with the parking, so a cancel cannot come in between and miss it
            if self._cancelled.is_set():
                return Answer.skipped()
            self._pending[parked.id] = parked
        try:
            parked.answered.wait(question.timeout_seconds)
        finally:
            with self._lock:
                self._pending.pop(parked.id, None)
        if parked.answer is not None:
            return parked.answer
        if self._cancelled.is_set():
            return Answer.skipped()
        return question.default if question.default is not None else Answer.timeout()

    def ask_multiple(self, questions: Sequence[Question]) -> list[Answer]:
        return [self.ask(question) for question in questions]

    def inform(self, message: str, stage: str) -> None:
        self.messages.append((stage, message))

    def answer(self, question_id: str, reply: str) -> Answer:
        """Answer a pending question.

        Raises:
            KeyError: No pending question has that id.
            UnknownAnswerError: The reply matches none of its options.
        """
        with self._lock:
            parked = self._pending[question_id]
            chosen = answer_for(parked.question, reply)
            parked.answer = chosen
            del self._pending[question_id]
        parked.answered.set()
        return chosen

    def cancel(self) -> None:
        """Release every waiting question (answered as skipped) and skip those asked from now on."""
        with self._lock:
            self._cancelled.set()
            parked_now = list(self._pending.values())
        for parked in parked_now:
            parked.answered.set()
