"""The built-in interviewers (Attractor 6.4): AutoApprove, Queue, Callback, Recording, and answers per node."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence

from orchestra_core.model.chat import DONE, ChatTurn
from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.interview import Answer, Question, QuestionType
from orchestra_core.ports.conversation import Conversation
from orchestra_core.ports.interviewer import Interviewer


class InterviewerBase:
    """`ask_multiple` as one `ask` per question, and `inform` collecting messages."""

    def __init__(self) -> None:
        self.messages: list[tuple[str, str]] = []

    def ask(self, question: Question) -> Answer:
        raise NotImplementedError

    def ask_multiple(self, questions: Sequence[Question]) -> list[Answer]:
        return [self.ask(question) for question in questions]

    def inform(self, message: str, stage: str) -> None:
        self.messages.append((stage, message))


class AutoApproveInterviewer(InterviewerBase):
    """YES to yes/no and confirmations, the first option of a multiple choice, `auto-approved` otherwise."""

    def ask(self, question: Question) -> Answer:
        if question.type in (QuestionType.YES_NO, QuestionType.CONFIRMATION):
            return Answer.yes()
        if question.type is QuestionType.MULTIPLE_CHOICE and question.options:
            return Answer.choose(question.options[0])
        return Answer("auto-approved", text="auto-approved")


class QueueInterviewer(InterviewerBase):
    """Answers from a pre-filled queue, in order; SKIPPED once it is empty."""

    def __init__(self, answers: Iterable[Answer] = ()) -> None:
        super().__init__()
        self._answers = deque(answers)
        self._lock = threading.Lock()

    def add(self, answer: Answer) -> None:
        with self._lock:
            self._answers.append(answer)

    def ask(self, question: Question) -> Answer:
        with self._lock:
            return self._answers.popleft() if self._answers else Answer.skipped()


class CallbackInterviewer(InterviewerBase):
    """Delegates every question to a function (web UI, chat bot, API)."""

    def __init__(self, callback: Callable[[Question], Answer]) -> None:
        super().__init__()
        self._callback = callback

    def ask(self, question: Question) -> Answer:
        return self._callback(question)


class RecordingInterviewer(InterviewerBase):
    """Wraps another interviewer and keeps every (question, answer) pair in `recordings`."""

    def __init__(self, inner: Interviewer) -> None:
        super().__init__()
        self.inner = inner
        self.recordings: list[tuple[Question, Answer]] = []
        self._lock = threading.Lock()

    def ask(self, question: Question) -> Answer:
        answer = self.inner.ask(question)
        with self._lock:
            self.recordings.append((question, answer))
        return answer

    def inform(self, message: str, stage: str) -> None:
        self.inner.inform(message, stage)


class AnswersError(OrchestraError):
    """An answers file is malformed or an answer in it fits no option; the message names the source."""


class StageAnswersInterviewer(InterviewerBase):
    """Answers per node id, consumed in order (`--answers FILE.yaml`).

    An interactive node's list is its human messages in order (`reply`). Each answer is a choice's accelerator key, its label or its target node id (for yes/no questions
    `yes`/`no`, for free text the text). A question whose node has no answer left goes to `fallback`
    (SKIPPED when there is none, which fails the gate).

    Args:
        answers: Node id -> answers in the order the node will ask.
        source: Where the answers came from, for messages.
        fallback: Who answers what the file does not.
    """

    def __init__(
        self, answers: Mapping[str, Sequence[str]], *, source: str = "answers", fallback: Interviewer | None = None
    ) -> None:
        super().__init__()
        self._answers = {stage: deque(replies) for stage, replies in answers.items()}
        self._messages = {stage: tuple(replies) for stage, replies in answers.items()}
        self._source = source
        self._fallback = fallback
        self._lock = threading.Lock()

    def ask(self, question: Question) -> Answer:
        with self._lock:
            pending = self._answers.get(question.stage)
            reply = pending.popleft() if pending else None
        if reply is None:
            return self._fallback.ask(question) if self._fallback is not None else Answer.skipped()
        return self._to_answer(question, reply)

    def reply(self, turn: ChatTurn) -> str:
        """An interactive node's human messages, in order: the message at the turn's position in the
        conversation (so a resumed conversation goes on with the next one); past the last, the fallback's
        reply when it holds conversations, else `/done`."""
        messages = self._messages.get(turn.node_id, ())
        if turn.index < len(messages):
            return messages[turn.index]
        if isinstance(self._fallback, Conversation):
            return self._fallback.reply(turn)
        return DONE

    def _to_answer(self, question: Question, reply: str) -> Answer:
        try:
            return answer_from_reply(question, reply)
        except UnmatchedReplyError as error:
            raise AnswersError(f"{self._source}: answer {reply!r} for node {question.stage} {error}") from None


class UnmatchedReplyError(ValueError):
    """A reply matches none of a question's options; the message says how (`matches none of its choices: ...`)."""


def answer_from_reply(question: Question, reply: str) -> Answer:
    """The answer a typed reply gives, as `--answers` and the server match it: an option by key (any case),
    label or target node; yes/no questions take yes/no/y/n/true/false; free text is taken as it is.

    Raises:
        UnmatchedReplyError: The reply matches no option.
    """
    if question.type is QuestionType.MULTIPLE_CHOICE and question.options:
        option = question.find_option(reply)
        if option is None:
            offered = ", ".join(f"{o.key} ({o.label})" for o in question.options)
            raise UnmatchedReplyError(f"matches none of its choices: {offered}")
        return Answer.choose(option)
    if question.type in (QuestionType.YES_NO, QuestionType.CONFIRMATION):
        lowered = reply.strip().lower()
        if lowered in ("y", "yes", "true"):
            return Answer.yes()
        if lowered in ("n", "no", "false"):
            return Answer.no()
        raise UnmatchedReplyError("is not yes or no")
    return Answer(reply, text=reply)


def parse_answers(document: object, source: str) -> dict[str, list[str]]:
    """Check the shape of a loaded answers document: node id -> one answer or a list of answers.

    Raises:
        AnswersError: The document is not such a mapping; the message names the source and the key.
    """
    if document is None:
        return {}
    if not isinstance(document, Mapping):
        raise AnswersError(f"{source}: expected a mapping of node id to answers, found {type(document).__name__}")
    parsed: dict[str, list[str]] = {}
    for key, value in document.items():
        replies = value if isinstance(value, list) else [value]
        for position, reply in enumerate(replies):
            if not isinstance(reply, str | int | float):
                raise AnswersError(f"{source}: {key}[{position}]: an answer must be text, found {type(reply).__name__}")
        parsed[str(key)] = [_reply_text(reply) for reply in replies]
    return parsed


def _reply_text(reply: str | int | float | bool) -> str:
    if isinstance(reply, bool):
        return "yes" if reply else "no"
    return str(reply)
