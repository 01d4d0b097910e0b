"""`orchestra attach SESSION` from another process answers what a running `orchestra run` waits for: a turn of
an interactive node's conversation and a human gate (the run's own console stays silent: its stdin is an open
pipe nobody writes to)."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.support.chat_project import DRAFTS, chat_project, conversation
from tests.support.orchestra_project import ORCHESTRA, SCRIPTED_PROVIDER, records_of, write_files
from tests.support.processes import wait_until

pytestmark = pytest.mark.slow

GATE = """digraph gate {
  start [shape=Mdiamond]; done [shape=Msquare]
  ship [shape=hexagon, label="Ship it?"]
  polish [prompt="Polish it"]
  start -> ship
  ship -> done [label="[Y] Yes"]
  ship -> polish [label="[N] No"]
  polish -> done
}
"""


def _start(project: Path, *arguments: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(ORCHESTRA), *arguments],
        cwd=project,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env={**os.environ, "NO_COLOR": "1"},
    )


@contextmanager
def processes(*started: subprocess.Popen[str]) -> Iterator[None]:
    try:
        yield
    finally:
        for process in started:
            if process.poll() is None:
                process.kill()
                process.wait(10)


def waiting(project: Path) -> dict[str, object]:
    path = project / ".orchestra" / "attach" / "1" / "waiting.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def send(process: subprocess.Popen[str], line: str) -> None:
    assert process.stdin is not None
    process.stdin.write(line + "\n")
    process.stdin.flush()


def test_attach_takes_part_in_an_interactive_conversation(tmp_path: Path) -> None:
    project = chat_project(tmp_path / "p")
    runner = _start(project, "run", "chat.dot", "--quiet")
    with processes(runner):
        assert wait_until(lambda: waiting(project).get("text") == DRAFTS[0] or runner.poll() is not None, 60)
        assert runner.poll() is None, runner.stderr.read() if runner.stderr else ""
        attacher = _start(project, "attach", "1")
        with processes(attacher):
            send(attacher, "Make it shorter")
            assert wait_until(
                lambda: waiting(project).get("text") == DRAFTS[1] or runner.poll() is not None, 60
            )
            send(attacher, "/approve")
            assert runner.wait(60) == 0, runner.stderr.read() if runner.stderr else ""
            assert attacher.wait(60) == 0
            shown = attacher.stdout.read() if attacher.stdout else ""
    assert conversation(project) == [(DRAFTS[0], "Make it shorter"), (DRAFTS[1], "/approve")]
    assert DRAFTS[0] in shown and DRAFTS[1] in shown and "you> " in shown
    assert not (project / ".orchestra" / "attach" / "1").exists()  # the channel goes with the run


def test_attach_answers_a_human_gate(tmp_path: Path) -> None:
    project = tmp_path / "p"
    write_files(
        project, {"orchestra.yaml": SCRIPTED_PROVIDER, "gate.dot": GATE, "cassette.yaml": "default: hi\n"}
    )
    runner = _start(project, "run", "gate.dot", "--quiet", "--json")
    with processes(runner):
        assert wait_until(lambda: waiting(project).get("kind") == "question" or runner.poll() is not None, 60)
        assert runner.poll() is None, runner.stderr.read() if runner.stderr else ""
        attacher = _start(project, "attach", "1")
        with processes(attacher):
            send(attacher, "N")
            assert runner.wait(60) == 0, (
                runner.stdout.read() + runner.stderr.read()
            )  # (communicate would close the run's stdin: end of input at its console)
            assert attacher.wait(60) == 0, attacher.stderr.read() if attacher.stderr else ""
            shown = attacher.stdout.read() if attacher.stdout else ""
            out = runner.stdout.read() if runner.stdout else ""
    assert "[?] Ship it? (ship)" in shown and "2. [N] No" in shown and "[N] [N]" not in shown
    assert json.loads(out)["completed_nodes"] == ["start", "ship", "polish", "done"]
    from orchestra_core.model.records import HumanInteraction

    ((_, gate),) = records_of(project, "1", HumanInteraction)
    assert gate.selected_option == "[N] No" and gate.question == "Ship it?"
