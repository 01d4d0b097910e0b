"""The Interviewer contract run against the queue, callback, recording, answers-file and console interviewers."""

from __future__ import annotations

import io
import os

from rich.console import Console

from orchestra_adapters.console.interviewer import ConsoleInterviewer
from orchestra_core.interview import (
    Answer,
    CallbackInterviewer,
    QueueInterviewer,
    RecordingInterviewer,
    StageAnswersInterviewer,
)
from orchestra_core.model.interview import Question, QuestionType
from orchestra_core.testing.contracts.interviewer import CHOICE, InterviewerContract


def as_answer(question: Question, reply: str | None) -> Answer:
    if reply is None:
        return Answer.skipped()
    if question.type is QuestionType.MULTIPLE_CHOICE:
        option = question.find_option(reply)
        assert option is not None
        return Answer.choose(option)
    if question.type is QuestionType.YES_NO:
        return Answer.yes() if reply == "yes" else Answer.no()
    return Answer(reply, text=reply)


class ScriptedHuman:
    def __init__(self, replies: list[str | None]) -> None:
        self.replies = list(replies)

    def __call__(self, question: Question) -> Answer:
        return as_answer(question, self.replies.pop(0) if self.replies else None)


class TestCallbackInterviewer(InterviewerContract):
    def make_interviewer(self, replies: list[str | None]) -> CallbackInterviewer:
        return CallbackInterviewer(ScriptedHuman(replies))


class TestRecordingInterviewer(InterviewerContract):
    def make_interviewer(self, replies: list[str | None]) -> RecordingInterviewer:
        return RecordingInterviewer(CallbackInterviewer(ScriptedHuman(replies)))


class TestQueueInterviewer(InterviewerContract):
    """The queue holds ready answers; it does not look at the question."""

    def make_interviewer(self, replies: list[str | None]) -> QueueInterviewer:
        answers = []
        for reply in replies:
            if reply is None:
                break
            option = CHOICE.find_option(reply)
            if reply in ("yes", "no"):
                answers.append(as_answer(Question("", QuestionType.YES_NO), reply))
            elif option is not None:
                answers.append(Answer.choose(option))
            else:
                answers.append(Answer(reply, text=reply))
        return QueueInterviewer(answers)


class TestStageAnswersInterviewer(InterviewerContract):
    def make_interviewer(self, replies: list[str | None]) -> StageAnswersInterviewer:
        return StageAnswersInterviewer({"gate": [r for r in replies if r is not None]}, source="answers.yaml")


class TestConsoleInterviewerOnAStream(InterviewerContract):
    def make_interviewer(self, replies: list[str | None]) -> ConsoleInterviewer:
        text = "".join(f"{reply}\n" for reply in replies if reply is not None)
        return ConsoleInterviewer(Console(file=io.StringIO()), io.StringIO(text))


class TestConsoleInterviewerOnAPipe(InterviewerContract):
    """A real file descriptor, so the timeout path (select) is used."""

    def make_interviewer(self, replies: list[str | None]) -> ConsoleInterviewer:
        read_fd, write_fd = os.pipe()
        with os.fdopen(write_fd, "w") as writer:
            writer.write("".join(f"{reply}\n" for reply in replies if reply is not None))
        reader = os.fdopen(read_fd)
        self.add_cleanup(reader.close)
        return ConsoleInterviewer(Console(file=io.StringIO()), reader)
