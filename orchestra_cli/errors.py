"""Exit codes and the one place where errors become one-line messages instead of tracebacks."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from typing import Any, NoReturn

import typer

EXIT_OK = 0
EXIT_FAILED = 1  # the pipeline failed or the graph has validation errors
EXIT_BAD_INPUT = 2  # unreadable file, DOT syntax error, bad config, unknown session
EXIT_BUDGET_EXCEEDED = 3  # a budget of the session was reached; `orchestra resume` continues it
EXIT_INTERNAL = 70
EXIT_INTERRUPTED = 130
MAX_ARGUMENT_CHARS = 64 * 1024  # documented in docs/cli.md


class _Report:
    """What this command has told its caller so far; decides whether `--json` still owes a document."""

    def __init__(self) -> None:
        self.reset(json=False)

    def reset(self, *, json: bool) -> None:
        """Start a command: no error yet; documents printed from now on are the command's."""
        from orchestra_cli.output import stdout_documents

        self.json = json  # --json is on the command line
        self.documents_before = stdout_documents()
        self.error: dict[str, Any] | None = None  # the last error reported: message and where

    def document_printed(self) -> bool:
        """Whether the command printed a JSON document on stdout."""
        from orchestra_cli.output import stdout_documents

        return stdout_documents() > self.documents_before


_report = _Report()
# Set while a caller that is not the terminal (the control MCP server) runs the commands' checks: what `fail`
# would print is kept here instead, and `refusals` turns it into a Refusal.
_refused: ContextVar[list[str] | None] = ContextVar("orchestra_refused", default=None)


class Refusal(Exception):
    """A command's check refused its input: the message `orchestra: error:` would have printed, and the exit
    code the command would have ended with."""

    def __init__(self, message: str, code: int = EXIT_BAD_INPUT) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


@contextmanager
def refusals() -> Iterator[None]:
    """Run the commands' checks for a caller that is not the terminal: whatever they refuse (with `fail`, or
    an OrchestraError as `user_errors` reports it) becomes a Refusal carrying the command's own message;
    nothing is printed and no `--json` error document is owed.

    Raises:
        Refusal: A check refused (its message, on one line, and the exit code).
    """
    token = _refused.set([])
    try:
        with user_errors():
            yield
    except typer.Exit as exit_:
        said = _refused.get() or [f"refused (exit status {exit_.exit_code})"]
        raise Refusal(said[-1], exit_.exit_code) from None
    finally:
        _refused.reset(token)


def one_line(text: str) -> str:
    """A possibly multi-line message (a config file's problems, git's stderr) as one line."""
    return "; ".join(line.strip() for line in text.strip().splitlines() if line.strip())


def fail(message: str, code: int = EXIT_BAD_INPUT, **details: Any) -> typer.Exit:
    """Print `orchestra: error: message` on stderr, always on one line, and return the Exit to raise.

    With --json the message (and `details`, such as `file` and `line`) also becomes the
    `{"error": {...}}` document on stdout when the command ends without printing one of its own.
    """
    line = one_line(message)
    refused = _refused.get()
    if refused is not None:
        refused.append(line)
        return typer.Exit(code)
    print(f"orchestra: error: {_encodable(line)}", file=sys.stderr)
    record_error(line, **details)
    return typer.Exit(code)


def record_error(message: str, **details: Any) -> None:
    """Remember why the command fails, for the `{"error": ...}` document of `--json`."""
    _report.error = {"message": message, **details}


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn OrchestraError (bad input the user can fix) into a one-line message and exit code 2."""
    from orchestra_core.model.errors import OrchestraError

    try:
        yield
    except OrchestraError as error:
        problems = config_problems(error)
        if len(problems) > 1:
            files = {str(problem.file) for problem in getattr(error, "problems", ())}
            where = files.pop() if len(files) == 1 else "the configuration"
            raise fail_with_lines(f"{len(problems)} problems in {where}:", problems, **_where(error)) from None
        raise fail(str(error), **_where(error)) from None


def config_problems(error: Exception) -> list[str]:
    """Each problem of a ConfigError (`file:line: key: detail`) as its own line; [] for other errors."""
    from orchestra_core.model.settings import ConfigError

    if not isinstance(error, ConfigError):
        return []
    return [one_line(problem.render()) for problem in error.problems]


def fail_with_lines(head: str, lines: Sequence[str], code: int = EXIT_BAD_INPUT, **details: Any) -> typer.Exit:
    """Like `fail`, for several problems: `orchestra: error: head`, then each problem on its own
    indented line. The JSON error document has them all in `problems` (and joined in `message`)."""
    refused = _refused.get()
    if refused is not None:
        refused.append(f"{one_line(head)} " + "; ".join(one_line(line) for line in lines))
        return typer.Exit(code)
    print(f"orchestra: error: {_encodable(one_line(head))}", file=sys.stderr)
    for line in lines:
        print(f"  {_encodable(one_line(line))}", file=sys.stderr)
    record_error("; ".join(one_line(line) for line in lines), problems=[one_line(line) for line in lines], **details)
    return typer.Exit(code)


def run_guarded(entry: Callable[..., Any], argv: Sequence[str] | None = None) -> NoReturn:
    """Run the Typer app and exit with its code; no traceback reaches the user, whatever happens.

    Arguments that are not UTF-8 or are over-long end with exit 2 before any command runs. Usage
    errors, interrupts and unexpected crashes end with a message; with `--json` on the command line a
    failing command always leaves a JSON document on stdout (`{"error": {"message", "exit_code", ...}}`).
    """
    args = list(sys.argv[1:] if argv is None else argv)
    _report.reset(json=json_requested(args))
    code = _run(entry, args)
    _finish(code)
    sys.exit(code)


def json_requested(args: Sequence[str]) -> bool:
    """Whether `--json` is among the options (before a `--` that ends them)."""
    options = args[: args.index("--")] if "--" in args else args
    return "--json" in options


def check_arguments(args: Sequence[str]) -> None:
    """Refuse an argument that is not UTF-8 (naming the byte) or longer than MAX_ARGUMENT_CHARS.

    Raises:
        typer.Exit: Exit code 2, after printing which argument and why.
    """
    for position, arg in enumerate(args, start=1):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError as error:
            raw = arg.encode("utf-8", "surrogateescape")  # the bytes as given (Python decodes argv so)
            offset = len(arg[: error.start].encode("utf-8", "surrogateescape"))
            raise fail(
                f"argument {position} ({_shown(arg)}) is not UTF-8: byte 0x{raw[offset]:02x} at offset {offset}"
            ) from None
        if len(arg) > MAX_ARGUMENT_CHARS:
            raise fail(
                f"argument {position} ({_shown(arg)}) is {len(arg)} characters long; "
                f"the limit is {MAX_ARGUMENT_CHARS}"
            )


def _shown(arg: str) -> str:
    readable = arg[:40].encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return repr(readable + ("..." if len(arg) > 40 else ""))


def _run(entry: Callable[..., Any], args: list[str]) -> int:
    try:
        check_arguments(args)
        result = entry(args=args, prog_name="orchestra", standalone_mode=False)
        return result if isinstance(result, int) else EXIT_OK
    except typer.Exit as exit_:
        return exit_.exit_code
    except typer.TyperException as error:  # a usage error: Typer's own message, as without --json
        show = getattr(error, "show", None)
        if show is not None:
            show()
        else:
            print(f"Error: {error.format_message()}", file=sys.stderr)
        record_error(one_line(error.format_message()))
        return error.exit_code
    except typer.Abort:
        print("orchestra: aborted", file=sys.stderr)
        record_error("aborted")
        return EXIT_FAILED
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else EXIT_FAILED
    except KeyboardInterrupt:
        print("orchestra: interrupted", file=sys.stderr)
        record_error("interrupted")
        return EXIT_INTERRUPTED
    except Exception as error:  # the last line of defence: a bug must still not dump on the user
        if os.environ.get("ORCHESTRA_DEBUG") == "1":
            raise
        message = f"internal error: {type(error).__name__}: {error}"
        print(f"orchestra: {one_line(message)} (set ORCHESTRA_DEBUG=1 for the traceback)", file=sys.stderr)
        record_error(one_line(message))
        return EXIT_INTERNAL


def _finish(code: int) -> None:
    """With --json, the error document a failing command still owes stdout."""
    if not _report.json or _report.document_printed() or code == EXIT_OK:
        return
    if _report.error is None and code == EXIT_FAILED:
        return  # a failure the command reported itself (attach's JSON lines of a failed run)
    from orchestra_cli.output import print_json

    error = _report.error or {"message": f"exited with status {code}"}
    document = {"error": {"message": error["message"], "exit_code": code, **error}}
    with suppress(OSError):  # stdout is gone (a closed pipe); the exit code still tells
        print_json(_encodable(document))


def _encodable(value: Any) -> Any:
    """`value` with undecodable bytes in its strings (a path from the file system) as `\\xNN` escapes."""
    if isinstance(value, str):
        return value.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    if isinstance(value, dict):
        return {key: _encodable(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_encodable(item) for item in value]
    return value


def _where(error: Exception) -> dict[str, Any]:
    """The file, line and key an error names, for the JSON error document."""
    details: dict[str, Any] = {}
    file = getattr(error, "file", None) or getattr(error, "path", None)
    if file is not None:
        details["file"] = str(file)
    for name in ("line", "key"):
        value = getattr(error, name, None)
        if value is not None:
            details[name] = value
    return details
