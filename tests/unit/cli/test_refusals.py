"""`refusals`: the commands' checks run for a caller that is not the terminal (the control MCP server). What they
would print as `orchestra: error: ...` becomes a Refusal with the same message; nothing reaches stderr, and the
`--json` error document of a command running in the same process is left alone."""

from __future__ import annotations

import threading

import pytest
import typer

from orchestra_cli.errors import EXIT_BAD_INPUT, Refusal, fail, fail_with_lines, refusals
from orchestra_cli.runtime.options import parse_set_values
from orchestra_core.model.errors import PipelineLoadError


def test_a_failed_check_is_a_refusal_with_the_message_it_prints_otherwise(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(typer.Exit):
        parse_set_values(("no-equals",))
    printed = capsys.readouterr().err.strip()

    with pytest.raises(Refusal) as refused, refusals():
        parse_set_values(("no-equals",))

    assert printed == f"orchestra: error: {refused.value.message}"
    assert refused.value.code == EXIT_BAD_INPUT
    assert capsys.readouterr().err == ""


def test_an_orchestra_error_is_refused_as_user_errors_words_it(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(Refusal) as refused, refusals():
        raise PipelineLoadError("unexpected '}'", path="p.dot", line=3)

    assert refused.value.message == str(PipelineLoadError("unexpected '}'", path="p.dot", line=3))
    assert capsys.readouterr().err == ""


def test_several_problems_are_one_message() -> None:
    with pytest.raises(Refusal) as refused, refusals():
        raise fail_with_lines("2 problems in orchestra.yaml:", ["a: bad", "b: worse"])

    assert refused.value.message == "2 problems in orchestra.yaml: a: bad; b: worse"


def test_outside_it_fail_prints_again_and_other_threads_are_not_captured(capsys: pytest.CaptureFixture[str]) -> None:
    printed: list[str] = []

    def elsewhere() -> None:
        fail("in another thread")
        printed.append(capsys.readouterr().err)

    with pytest.raises(Refusal), refusals():
        worker = threading.Thread(target=elsewhere)
        worker.start()
        worker.join()
        raise fail("captured")
    fail("after")

    assert printed == ["orchestra: error: in another thread\n"]
    assert capsys.readouterr().err == "orchestra: error: after\n"

