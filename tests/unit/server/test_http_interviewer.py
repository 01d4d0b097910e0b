"""HttpInterviewer: a cancel releases a question however it interleaves with the question being asked."""

from __future__ import annotations

import threading

import pytest

from orchestra_adapters.server import questions
from orchestra_adapters.server.questions import HttpInterviewer
from orchestra_core.model.interview import AnswerValue, Question, QuestionType


def test_a_cancel_between_the_check_and_the_parking_is_not_missed(monkeypatch: pytest.MonkeyPatch) -> None:
    interviewer = HttpInterviewer()

    class CancelledWhileParking(questions.PendingQuestion):
        def __init__(self, question: Question) -> None:
            super().__init__(question)
            interviewer.cancel()  # the HTTP cancel arrives while `ask` is parking the question

    monkeypatch.setattr(questions, "PendingQuestion", CancelledWhileParking)
    answers = []
    asking = threading.Thread(
        target=lambda: answers.append(interviewer.ask(Question("Ship?", QuestionType.YES_NO, stage="gate"))),
        daemon=True,
    )
    asking.start()
    asking.join(60)  # a missed cancel would leave a question without a timeout waiting for ever
    assert not asking.is_alive() and [answer.value for answer in answers] == [AnswerValue.SKIPPED]
    assert interviewer.pending() == []
