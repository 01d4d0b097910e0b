"""run_guarded: known exit codes, no traceback, arguments checked, and a JSON error document with --json."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

import pytest
import typer

from orchestra_cli.errors import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    EXIT_INTERNAL,
    MAX_ARGUMENT_CHARS,
    check_arguments,
    fail,
    json_requested,
    run_guarded,
)
from orchestra_cli.output import print_json
from orchestra_cli.runtime.options import MAX_SET_KEY_CHARS, parse_set_values
from orchestra_core.model.errors import PipelineLoadError


def guarded(entry: Callable[..., Any], *args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exited:
        run_guarded(entry, list(args))
    out, err = capsys.readouterr()
    return int(exited.value.code or 0), out, err


def entry_raising(error: BaseException | Callable[[], BaseException]) -> Callable[..., Any]:
    """A stand-in for the Typer app that raises `error` (made inside the command when it is a factory)."""

    def entry(args: list[str], prog_name: str, standalone_mode: bool) -> None:
        assert standalone_mode is False and prog_name == "orchestra"
        raise error() if callable(error) else error

    return entry


def test_json_is_requested_by_the_option_before_a_double_dash() -> None:
    assert json_requested(["compile", "p.dot", "--json"])
    assert not json_requested(["compile", "p.dot"])
    assert not json_requested(["run", "--", "--json"])


def test_a_failure_with_json_prints_the_error_document(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = guarded(entry_raising(lambda: fail("p.dot:3: bad", file="p.dot", line=3)), "x", "--json", capsys=capsys)
    assert code == EXIT_BAD_INPUT and err == "orchestra: error: p.dot:3: bad\n"
    assert json.loads(out) == {"error": {"message": "p.dot:3: bad", "exit_code": 2, "file": "p.dot", "line": 3}}


def test_without_json_stdout_stays_empty(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = guarded(entry_raising(lambda: fail("bad")), "x", capsys=capsys)
    assert code == EXIT_BAD_INPUT and out == ""


def test_no_error_document_after_a_document_of_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    def entry(args: list[str], **_: object) -> None:
        print_json({"valid": False})
        raise typer.Exit(EXIT_FAILED)

    code, out, _ = guarded(entry, "compile", "--json", capsys=capsys)
    assert code == EXIT_FAILED and json.loads(out) == {"valid": False}


def test_an_internal_error_is_exit_70_with_a_json_document(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = guarded(entry_raising(ValueError("boom")), "x", "--json", capsys=capsys)
    assert code == EXIT_INTERNAL and "Traceback" not in err and "internal error: ValueError: boom" in err
    assert json.loads(out)["error"] == {"message": "internal error: ValueError: boom", "exit_code": 70}


def test_a_usage_error_of_typer_is_exit_2_with_a_json_document(capsys: pytest.CaptureFixture[str]) -> None:
    from orchestra_cli.app import app

    code, out, err = guarded(app, "compile", "--json", "--no-such-option", capsys=capsys)
    assert code == EXIT_BAD_INPUT and "No such option: --no-such-option" in err
    assert json.loads(out)["error"] == {"message": "No such option: --no-such-option", "exit_code": 2}


def test_an_orchestra_error_names_its_file_and_line(capsys: pytest.CaptureFixture[str]) -> None:
    from orchestra_cli.errors import user_errors

    def entry(args: list[str], **_: object) -> None:
        with user_errors():
            raise PipelineLoadError("unexpected '}'", path="p.dot", line=4)

    code, out, _ = guarded(entry, "--json", capsys=capsys)
    assert code == EXIT_BAD_INPUT
    assert json.loads(out)["error"] == {
        "message": "p.dot:4: unexpected '}'", "exit_code": 2, "file": "p.dot", "line": 4,
    }


def test_a_failed_command_that_reported_itself_gets_no_error_document(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = guarded(entry_raising(typer.Exit(EXIT_FAILED)), "attach", "s", "--json", capsys=capsys)
    assert code == EXIT_FAILED and out == ""


def test_arguments_that_are_not_utf8_are_refused_naming_the_byte(capsys: pytest.CaptureFixture[str]) -> None:
    bad = os.fsdecode(b"k=caf\xe9")
    code, out, err = guarded(entry_raising(AssertionError("not reached")), "run", "--set", bad, "--json", capsys=capsys)
    assert code == EXIT_BAD_INPUT
    assert err == "orchestra: error: argument 3 ('k=caf\\\\xe9') is not UTF-8: byte 0xe9 at offset 5\n"
    assert json.loads(out)["error"]["exit_code"] == 2


def test_over_long_arguments_are_refused() -> None:
    check_arguments(["x" * MAX_ARGUMENT_CHARS])
    with pytest.raises(typer.Exit):
        check_arguments(["run", "x" * (MAX_ARGUMENT_CHARS + 1)])


def test_set_keys_are_bounded(capsys: pytest.CaptureFixture[str]) -> None:
    assert parse_set_values(("k" * MAX_SET_KEY_CHARS + "=v",)) == {"k" * MAX_SET_KEY_CHARS: "v"}
    with pytest.raises(typer.Exit):
        parse_set_values(("k" * (MAX_SET_KEY_CHARS + 1) + "=v",))
    assert f"is longer than {MAX_SET_KEY_CHARS} characters" in capsys.readouterr().err


def test_undecodable_bytes_in_a_message_do_not_break_the_json_document(capsys: pytest.CaptureFixture[str]) -> None:
    name = os.fsdecode(b"caf\xe9.dot")  # a file name from the file system, not from the command line
    code, out, _ = guarded(entry_raising(lambda: fail(f"{name}: file not found", file=name)), "--json", capsys=capsys)
    assert code == EXIT_BAD_INPUT
    assert json.loads(out)["error"]["message"] == "caf\\xe9.dot: file not found"
