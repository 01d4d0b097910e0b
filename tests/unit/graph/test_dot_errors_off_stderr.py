"""DOT syntax errors come back as exceptions naming the line, never as text on the process's stderr."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from orchestra_core.graph import parse_dot
from orchestra_core.model.errors import PipelineLoadError

ROOT = Path(__file__).resolve().parents[3]

_SCRIPT = textwrap.dedent(
    """
    import sys, tempfile
    from orchestra_core.graph import parse_dot
    from orchestra_core.model.errors import PipelineLoadError
    try:
        parse_dot("digraph G {\\n  a -> b\\n  c ;; -> \\n}\\n")
    except PipelineLoadError as error:
        print(error.line, error, flush=True)
    parse_dot("digraph G { a -> b }")
    if len(sys.argv) > 1:  # Graphviz's own reporting is back once the read is over
        from pygraphviz import graphviz
        with tempfile.TemporaryFile() as source:
            source.write(b"digraph { a -> }")
            source.seek(0)
            try:
                graphviz.agread(source, None)
            except ValueError:
                pass
    """
)


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _SCRIPT, *args], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True
    )


def test_a_syntax_error_writes_nothing_to_stderr_and_names_the_line() -> None:
    process = _run()
    assert process.stderr == ""
    line, message = process.stdout.strip().split(" ", 1)
    assert line == "3" and "syntax error" in message


def test_graphviz_reports_as_before_once_the_read_is_over() -> None:
    assert _run("restore").stderr.strip() == "Error: syntax error in line 1 near '}'"


def test_reads_in_several_threads_each_get_their_own_line() -> None:
    def line_of(broken: int) -> int | None:
        text = "digraph G {\n" + "  a -> b\n" * broken + "  c ;; -> \n}\n"
        with pytest.raises(PipelineLoadError) as caught:
            parse_dot(text)
        return caught.value.line

    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(line_of, range(1, 21))) == [n + 2 for n in range(1, 21)]


def test_reading_never_redirects_a_file_descriptor(monkeypatch: pytest.MonkeyPatch) -> None:
    redirected: list[tuple[int, int]] = []
    real_dup2 = os.dup2

    def recording_dup2(fd: int, fd2: int, inheritable: bool = True) -> int:
        redirected.append((fd, fd2))
        return real_dup2(fd, fd2, inheritable)

    monkeypatch.setattr(os, "dup2", recording_dup2)
    with pytest.raises(PipelineLoadError, match="syntax error") as caught:
        parse_dot("digraph G {\n  a -> \n}\n")
    monkeypatch.undo()
    assert caught.value.line == 3 and redirected == []
