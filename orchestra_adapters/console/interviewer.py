"""ConsoleInterviewer: asks on the terminal with rich, reads the answer from standard input, with timeout."""

from __future__ import annotations

import select
import sys
import threading
import time
from typing import IO, Any

from orchestra_adapters.console.run_channel import RunChannel
from orchestra_core.interview.interviewers import InterviewerBase
from orchestra_core.model.chat import DONE, ChatTurn
from orchestra_core.model.interview import Answer, Question, QuestionType, split_accelerator

MAX_INVALID_REPLIES = 5
ATTACH_POLL_S = 0.1  # how often a waiting console looks for an answer sent by `orchestra attach`
_TIMED_OUT = object()
_END = object()


class ConsoleInterviewer(InterviewerBase):
    """Prints each question (with its options and accelerator keys) and reads a line per answer.

    A reply may be an option's key, its label or its number in the list. An invalid reply is asked again
    (up to five times, then the question counts as skipped); end of input means skipped; no reply within
    the question's timeout gives its default, else TIMEOUT. Questions from parallel branches are asked
    one at a time.

    Args:
        console: A rich Console to print on (default: one on standard error, so `--json` output stays clean).
        input_stream: Where answers are read from (default: standard input).
    """

    def __init__(self, console: Any = None, input_stream: IO[str] | None = None) -> None:
        super().__init__()
        self._given_console = console
        self._input = input_stream if input_stream is not None else sys.stdin
        self._lock = threading.Lock()
        self.channel: RunChannel | None = None  # set once the session is known (`orchestra attach` answers)
        self._wait_id: str | None = None
        self.stop: threading.Event | None = None  # the run's stop: a cancel from elsewhere ends the wait (skipped)

    @property
    def _console(self) -> Any:
        if self._given_console is None:  # made on first use: rich costs start-up time
            from rich.console import Console

            self._given_console = Console(stderr=True)
        return self._given_console

    def ask(self, question: Question) -> Answer:
        with self._lock:
            deadline = (
                None if question.timeout_seconds is None else time.monotonic() + question.timeout_seconds
            )
            self._show(question)
            options = [{"key": option.key, "label": option.label} for option in question.options]
            self._publish(kind="question", node_id=question.stage, text=question.text, options=options,
                          type=question.type.value)
            try:
                return self._answer(question, deadline)
            finally:
                self._unpublish()

    def _answer(self, question: Question, deadline: float | None) -> Answer:
        for _ in range(MAX_INVALID_REPLIES):
            reply = self._readline(deadline)
            if reply is _TIMED_OUT:
                self._console.print("(no answer in time)", style="yellow")
                return question.default or Answer.timeout()
            if reply is _END:
                return Answer.skipped()
            assert isinstance(reply, str)
            answer = self._interpret(question, reply.strip())
            if answer is not None:
                return answer
            self._console.print(f"not a valid answer: {reply.strip()!r}", style="red", markup=False)
        return Answer.skipped()

    def reply(self, turn: ChatTurn) -> str:
        """The terminal chat of an interactive node: prints the agent's reply, reads the human's line (an empty
        line is asked again; end of input is `/done`)."""
        with self._lock:
            self._console.print(f"[{turn.node_id}] agent:", style="bold green", markup=False, highlight=False)
            self._console.print(turn.agent_message, markup=False, highlight=False)
            self._console.print("(/done, /approve or /reject ends the conversation)", style="dim", markup=False)
            self._console.print("you> ", end="", markup=False, highlight=False)
            self._publish(kind="chat", node_id=turn.node_id, text=turn.agent_message,
                          exchanges=[list(pair) for pair in turn.exchanges])
            try:
                line = self._readline(None)
                while isinstance(line, str) and not line.strip():  # an empty line ends nothing: asked again
                    self._console.print("you> ", end="", markup=False, highlight=False)
                    line = self._readline(None)
            finally:
                self._unpublish()
            return DONE if line is _END else str(line)

    def _publish(self, **waiting: Any) -> None:
        """Tell `orchestra attach` what waits (when the run has an attach channel)."""
        if self.channel is not None:
            self._wait_id = self.channel.publish(waiting)

    def _unpublish(self) -> None:
        if self.channel is not None:
            self.channel.clear()
        self._wait_id = None

    def inform(self, message: str, stage: str) -> None:
        self._console.print(f"[{stage}] {message}", markup=False, highlight=False)

    def _show(self, question: Question) -> None:
        where = f" ({question.stage})" if question.stage else ""
        self._console.print(f"[?] {question.text}{where}", style="bold blue", markup=False, highlight=False)
        if question.type is QuestionType.MULTIPLE_CHOICE:
            for number, option in enumerate(question.options, start=1):
                self._console.print(
                    f"  {option_line(number, option.key, option.label)}", markup=False, highlight=False
                )
            prompt = "Select: "
        elif question.type in (QuestionType.YES_NO, QuestionType.CONFIRMATION):
            prompt = "[Y/N]: "
        else:
            prompt = "> "
        if question.timeout_seconds is not None:
            prompt = f"(within {question.timeout_seconds:g}s) {prompt}"
        self._console.print(prompt, end="", markup=False, highlight=False)

    def _interpret(self, question: Question, reply: str) -> Answer | None:
        if question.type is QuestionType.MULTIPLE_CHOICE:
            if reply.isdigit() and 1 <= int(reply) <= len(question.options):
                return Answer.choose(question.options[int(reply) - 1])
            option = question.find_option(reply)
            return Answer.choose(option) if option is not None else None
        if question.type in (QuestionType.YES_NO, QuestionType.CONFIRMATION):
            lowered = reply.lower()
            if lowered in ("y", "yes"):
                return Answer.yes()
            if lowered in ("n", "no"):
                return Answer.no()
            return None
        return Answer(reply, text=reply)

    def _readline(self, deadline: float | None) -> object:
        descriptor = _fileno(self._input)
        if self.channel is not None and self._wait_id is not None and descriptor is not None:
            return self._read_line_or_attach(descriptor, deadline)
        if deadline is not None:
            remaining = max(deadline - time.monotonic(), 0.0)
            if descriptor is not None:
                ready, _, _ = select.select([descriptor], [], [], remaining)
                if not ready:
                    return _TIMED_OUT
        line = self._input.readline()
        return _END if line == "" else line.rstrip("\r\n")


    def _read_line_or_attach(self, descriptor: int, deadline: float | None) -> object:
        """A line typed here or an answer sent by `orchestra attach`, whichever comes first."""
        assert self.channel is not None and self._wait_id is not None
        while True:
            if self.stop is not None and self.stop.is_set():
                return _END
            sent = self.channel.take(self._wait_id)
            if sent is not None:
                self._console.print(f"{sent}  (from orchestra attach)", markup=False, highlight=False)
                return sent
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return _TIMED_OUT
            wait = ATTACH_POLL_S if remaining is None else min(ATTACH_POLL_S, remaining)
            ready, _, _ = select.select([descriptor], [], [], wait)
            if ready:
                line = self._input.readline()
                return _END if line == "" else line.rstrip("\r\n")


def option_line(number: int, key: str, label: str) -> str:
    """How an option is listed: `1. [A] Approve`, the key once even when the label carries it (`[A] Approve`)."""
    _, rest = split_accelerator(label)
    return f"{number}. [{key}] {rest or label}"


def _fileno(stream: IO[str]) -> int | None:
    try:
        return stream.fileno()
    except (OSError, ValueError, AttributeError):
        return None
