"""The `orchestra` CLI run in this process (as the console script runs it, minus the interpreter start).

Property tests run hundreds of commands; a subprocess each would cost a third of a second of start-up.
`run_guarded` is the console script's entry, so exit codes, messages and `--json` documents are the
binary's; tests/e2e checks the binary itself on the same inputs.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

from attrs import frozen

from orchestra_cli.app import app
from orchestra_cli.errors import run_guarded

KNOWN_EXIT_CODES = (0, 1, 2)


@frozen
class CliResult:
    """How a command ended: its exit code and what it printed."""

    code: int
    stdout: str
    stderr: str

    def json_document(self) -> Any:
        """The one JSON document on stdout (fails the test when there is none)."""
        assert self.stdout.strip(), f"no JSON document on stdout (exit {self.code}): {self.stderr}"
        return json.loads(self.stdout)


def run_cli(*args: str | Path, cwd: Path) -> CliResult:
    """Run `orchestra ARGS` in `cwd` and return how it ended."""
    out, err = io.StringIO(), io.StringIO()
    code: Any = 0
    with contextlib.chdir(cwd), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            run_guarded(app, [str(arg) for arg in args])
        except SystemExit as exit_:
            code = exit_.code
    return CliResult(int(code or 0), out.getvalue(), err.getvalue())


def assert_well_behaved(result: CliResult, *, json_output: bool) -> None:
    """No traceback, a known exit code, and with --json one JSON document on stdout (an error one when
    the command failed without a report of its own)."""
    assert "Traceback" not in result.stderr, result.stderr
    assert "internal error" not in result.stderr, result.stderr
    assert result.code in KNOWN_EXIT_CODES, (result.code, result.stderr)
    if not json_output:
        return
    document = result.json_document()
    assert isinstance(document, dict)
    if "error" in document:
        assert result.code != 0
        assert document["error"]["exit_code"] == result.code
        assert isinstance(document["error"]["message"], str) and document["error"]["message"]
