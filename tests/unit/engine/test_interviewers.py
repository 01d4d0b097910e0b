"""Interviewers beyond the contract: auto-approve, answers files, the console's timeout and re-asking."""

from __future__ import annotations

import io
import os
import time
from pathlib import Path

import pytest
from rich.console import Console

from orchestra_adapters.console.answers_file import load_answers_file
from orchestra_adapters.console.interviewer import ConsoleInterviewer, option_line
from orchestra_core.interview import (
    Answer,
    AnswersError,
    AutoApproveInterviewer,
    Option,
    Question,
    QuestionType,
    RecordingInterviewer,
    StageAnswersInterviewer,
    parse_answers,
)

CHOICE = Question("Deploy?", QuestionType.MULTIPLE_CHOICE, (Option("Y", "[Y] Yes"), Option("N", "[N] No")), stage="gate")


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        (CHOICE, Answer.choose(Option("Y", "[Y] Yes"))),
        (Question("ok?", QuestionType.YES_NO), Answer.yes()),
        (Question("ok?", QuestionType.CONFIRMATION), Answer.yes()),
        (Question("why?", QuestionType.FREEFORM), Answer("auto-approved", text="auto-approved")),
    ],
)
def test_auto_approve(question: Question, expected: Answer) -> None:
    assert AutoApproveInterviewer().ask(question) == expected


def test_recording_keeps_pairs_and_forwards_inform() -> None:
    inner = AutoApproveInterviewer()
    recording = RecordingInterviewer(inner)
    recording.ask(CHOICE)
    recording.inform("hello", "gate")
    assert recording.recordings == [(CHOICE, Answer.choose(Option("Y", "[Y] Yes")))]
    assert inner.messages == [("gate", "hello")]


def test_stage_answers_are_consumed_in_order_then_fall_back() -> None:
    interviewer = StageAnswersInterviewer({"gate": ["N", "[Y] Yes"]}, fallback=AutoApproveInterviewer())
    assert [interviewer.ask(CHOICE).value for _ in range(3)] == ["N", "Y", "Y"]
    other = Question("?", QuestionType.MULTIPLE_CHOICE, CHOICE.options, stage="other")
    assert StageAnswersInterviewer({"gate": ["N"]}).ask(other).is_skipped


def test_stage_answers_that_fit_no_option_are_clear_errors() -> None:
    interviewer = StageAnswersInterviewer({"gate": ["maybe"]}, source="answers.yaml")
    with pytest.raises(AnswersError, match=r"answers.yaml: answer 'maybe' for node gate matches none of its choices: Y \(\[Y\] Yes\)"):
        interviewer.ask(CHOICE)
    with pytest.raises(AnswersError, match="is not yes or no"):
        StageAnswersInterviewer({"gate": ["perhaps"]}).ask(Question("?", QuestionType.YES_NO, stage="gate"))


def test_parse_answers_shapes() -> None:
    assert parse_answers({"gate": "A", "deploy": ["R", 2, True]}, "f") == {"gate": ["A"], "deploy": ["R", "2", "yes"]}
    assert parse_answers(None, "f") == {}
    with pytest.raises(AnswersError, match="f: expected a mapping"):
        parse_answers(["A"], "f")
    with pytest.raises(AnswersError, match=r"f: gate\[1\]: an answer must be text"):
        parse_answers({"gate": ["A", {"x": 1}]}, "f")


def test_answers_file_loading(tmp_path: Path) -> None:
    good = tmp_path / "answers.yaml"
    good.write_text("review_gate: approve\ndeploy_gate: [R, '[A] Approve']\n", encoding="utf-8")
    assert load_answers_file(good) == {"review_gate": ["approve"], "deploy_gate": ["R", "[A] Approve"]}
    bad = tmp_path / "bad.yaml"
    bad.write_text("gate: [A\nother: b\n", encoding="utf-8")
    with pytest.raises(AnswersError, match=r"bad.yaml:\d+: not valid YAML"):
        load_answers_file(bad)
    with pytest.raises(AnswersError, match="answers file not found"):
        load_answers_file(tmp_path / "missing.yaml")


def console(text: str) -> tuple[ConsoleInterviewer, io.StringIO]:
    shown = io.StringIO()
    return ConsoleInterviewer(Console(file=shown, width=200), io.StringIO(text)), shown


def test_console_shows_options_and_accepts_key_label_or_number() -> None:
    interviewer, shown = console("2\n")
    assert interviewer.ask(CHOICE).value == "N"
    assert "[?] Deploy? (gate)" in shown.getvalue() and "1. [Y] Yes" in shown.getvalue()
    assert console("yes\n")[0].ask(CHOICE).value == "Y"


def test_console_lists_each_option_key_once() -> None:
    interviewer, shown = console("1\n")
    interviewer.ask(CHOICE)
    assert "[Y] [Y]" not in shown.getvalue() and "2. [N] No" in shown.getvalue()
    assert option_line(1, "A", "[A] Approve") == "1. [A] Approve"
    assert option_line(2, "B", "A) Abort") == "2. [B] Abort"  # the key the gate gave it, once
    assert option_line(3, "F", "Fix it") == "3. [F] Fix it"


def test_console_asks_again_after_an_invalid_reply() -> None:
    interviewer, shown = console("x\nN\n")
    assert interviewer.ask(CHOICE).value == "N"
    assert "not a valid answer: 'x'" in shown.getvalue()
    assert console("a\nb\nc\nd\ne\nY\n")[0].ask(CHOICE).is_skipped  # five invalid replies


def test_console_end_of_input_is_skipped() -> None:
    assert console("")[0].ask(CHOICE).is_skipped


def test_console_chat_asks_again_after_an_empty_line_and_end_of_input_is_done() -> None:
    from orchestra_core.model.chat import DONE, ChatTurn

    interviewer, shown = console("\n   \nMake it shorter\n")
    assert interviewer.reply(ChatTurn("synth", "Draft one")) == "Make it shorter"
    assert shown.getvalue().count("you> ") == 3
    assert interviewer.reply(ChatTurn("synth", "Draft two")) == DONE


def test_console_timeout_gives_the_default_or_timeout() -> None:
    read_fd, write_fd = os.pipe()
    try:
        with os.fdopen(read_fd) as reader:
            interviewer = ConsoleInterviewer(Console(file=io.StringIO()), reader)
            quick = Question("?", QuestionType.MULTIPLE_CHOICE, CHOICE.options, timeout_seconds=0.05)
            started = time.monotonic()
            assert interviewer.ask(quick).is_timeout
            assert time.monotonic() - started < 2
            with_default = Question("?", QuestionType.YES_NO, timeout_seconds=0.05, default=Answer.no())
            assert interviewer.ask(with_default) == Answer.no()
    finally:
        os.close(write_fd)

