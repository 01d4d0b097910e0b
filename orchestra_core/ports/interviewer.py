"""Interviewer port: how the pipeline asks a human (Attractor 6.1)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from orchestra_core.model.interview import Answer, Question


@runtime_checkable
class Interviewer(Protocol):
    """A frontend that puts questions to a human: console, web UI, answers file, test queue."""

    def ask(self, question: Question) -> Answer:
        """Ask one question and wait for the answer.

        Returns:
            The answer; `Answer.timeout()` when `question.timeout_seconds` passed without one (or the
            question's default, when it has one), `Answer.skipped()` when the human declined.
        """
        ...

    def ask_multiple(self, questions: Sequence[Question]) -> list[Answer]:
        """Ask several questions in order; one answer per question."""
        ...

    def inform(self, message: str, stage: str) -> None:
        """Show a message that needs no answer."""
        ...
