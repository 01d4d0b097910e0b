"""Exit codes and the one place where errors become one-line messages instead of tracebacks."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import typer

EXIT_OK = 0
EXIT_FAILED = 1  # the pipeline failed or the graph has validation errors
EXIT_BAD_INPUT = 2  # unreadable file, DOT syntax error, bad config, unknown session
EXIT_INTERNAL = 70
EXIT_INTERRUPTED = 130


def one_line(text: str) -> str:
    """A possibly multi-line message (a config file's problems, git's stderr) as one line."""
    return "; ".join(line.strip() for line in text.strip().splitlines() if line.strip())


def fail(message: str, code: int = EXIT_BAD_INPUT) -> typer.Exit:
    """Print `orchestra: error: message` on stderr, always on one line, and return the Exit to raise."""
    print(f"orchestra: error: {one_line(message)}", file=sys.stderr)
    return typer.Exit(code)


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn OrchestraError (bad input the user can fix) into a one-line message and exit code 2."""
    from orchestra_core.model.errors import OrchestraError

    try:
        yield
    except OrchestraError as error:
        raise fail(str(error)) from None


def run_guarded(entry: object) -> None:
    """Run the Typer app; interrupts and unexpected crashes end with a message, not a traceback."""
    try:
        entry()  # type: ignore[operator]
    except KeyboardInterrupt:
        print("orchestra: interrupted", file=sys.stderr)
        sys.exit(EXIT_INTERRUPTED)
    except Exception as error:  # the last line of defence: a bug must still not dump on the user
        if os.environ.get("ORCHESTRA_DEBUG") == "1":
            raise
        print(
            f"orchestra: internal error: {type(error).__name__}: {error} (set ORCHESTRA_DEBUG=1 for the traceback)",
            file=sys.stderr,
        )
        sys.exit(EXIT_INTERNAL)
