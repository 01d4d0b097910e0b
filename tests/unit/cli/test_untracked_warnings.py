"""The safety net's commits are shown as warnings naming the files: run progress, attach lines, `orchestra show`."""

from __future__ import annotations

import io

from attrs import evolve

from orchestra_adapters.console.progress import RichProgress
from orchestra_cli.runtime.progress_feed import ProgressFeed, describe_turn
from orchestra_cli.session_views import turn_line
from orchestra_core.model.turn import AgentTurn
from orchestra_core.model.workspace_events import UntrackedWritesCommitted
from orchestra_core.session.turn_view import TurnView
from tests.unit.show.test_commit_view import traced

EVENT = UntrackedWritesCommitted(
    session_id="s1", repo="app", node_id="implement", turn_number=4, paths=("out.txt", "gen/a.py"),
    sha="0123456789abcdef", branch="orchestra/p/1",
)


class _Notes:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def note(self, line: str) -> None:
        self.lines.append(line)

    def on_event(self, event: object) -> None:
        return None


def test_the_progress_feed_warns_naming_the_files_and_the_commit() -> None:
    notes = _Notes()
    ProgressFeed([notes])(EVENT)
    [line] = notes.lines
    assert line.startswith("warning: implement turn 4 changed files in app that no tool reported")
    assert "01234567" in line and line.endswith("out.txt, gen/a.py")


def test_an_untracked_turn_reads_as_such() -> None:
    turn = AgentTurn("implement", 4, "m", "p", files_written=("app:out.txt",), untracked=True)
    assert describe_turn(turn).startswith("  . implement turn 4: untracked changes")


def test_attach_prints_the_warning_line() -> None:
    line = turn_line(TurnView("9", "dev.orchestra.UntrackedWritesCommitted", "s1", None, None, EVENT))
    assert line is not None and "warning: implement turn 4 changed files in app" in line


def test_the_rich_view_prints_warnings_in_yellow_even_while_live() -> None:
    from rich.console import Console

    out = io.StringIO()
    view = RichProgress(Console(file=out, force_terminal=False, width=200))
    view._live = object()  # a parallel block is live: plain notes wait, warnings do not
    view.note("  . a turn 1: no tools")
    view.note("warning: something the user must see")
    assert out.getvalue() == "warning: something the user must see\n"


def test_show_flags_an_untracked_commit() -> None:
    from orchestra_cli.commit_view import show_json, show_text

    base = traced()
    record = evolve(base.found.record, untracked=True)
    commit = evolve(base, found=evolve(base.found, record=record), trailers=evolve(base.trailers, untracked=True))
    lines = show_text(commit, shorten=True)
    assert any(line.startswith("warning  untracked:") for line in lines)
    document = show_json(commit)
    assert document["turn"]["untracked"] is True and document["commit"]["trailers"]["untracked"] is True
    assert not any(line.startswith("warning") for line in show_text(base, shorten=True))
