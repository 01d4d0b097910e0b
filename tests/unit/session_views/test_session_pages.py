"""Pages of a session's turns (`status SESSION --json --limit N --after TURN`): read in pages, a session's turns
are the full summary's, in order, each once; the header and counts are the whole session's; a long session's page
reads about a page of turns however long it is."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from orchestra_adapters.storage.sqlite_store import SqliteSessionStore
from orchestra_core.model import records as r
from orchestra_core.ports.session_store import Id, SessionStore, StoredTurn, TurnRange
from orchestra_core.session import api
from orchestra_core.session.pages import PageError, SessionPage, session_page
from orchestra_core.session.summary import session_summary
from orchestra_core.testing.backends import ScriptedCodergenBackend
from tests.support.engine import graph, linear
from tests.support.long_sessions import build_long_session
from tests.support.sessions import RecordedRun
from tests.unit.session_views.test_session_summary import FAN, NESTED, RETRIED, TurningBackend, agent_turn


def _all_pages(store: SessionStore, session_id: str, limit: int) -> list[SessionPage]:
    pages = [session_page(store, session_id, limit=limit)]
    while pages[-1].has_more:
        assert pages[-1].next_after is not None and len(pages[-1].summary.turns) == limit
        pages.append(session_page(store, session_id, limit=limit, after=pages[-1].next_after))
    assert pages[-1].next_after is None
    return pages


@pytest.mark.parametrize(
    ("pipeline", "backend"),
    [
        (
            linear("a", "b", "c"),
            TurningBackend({"a": [agent_turn("a", 0, (100, 10)), agent_turn("a", 1, (5, 1))]}),
        ),
        (RETRIED, ScriptedCodergenBackend({"a": ["retry", "fail", "success"]})),
        (FAN, TurningBackend({"l": [agent_turn("l", 0, (7, 3))], "r": [agent_turn("r", 0, (1, 1))]})),
        (NESTED, None),
    ],
    ids=["linear", "retried", "fan", "nested"],
)
@pytest.mark.parametrize("limit", [1, 3, 1000])
def test_pages_hold_every_turn_of_the_full_summary_once_in_order(
    store: SessionStore, pipeline: Any, backend: Any, limit: int
) -> None:
    run = RecordedRun(store, backend=backend)
    run.run(graph(pipeline) if isinstance(pipeline, str) else pipeline)
    full = session_summary(store, run.session_id).to_json()
    pages = [page.to_json() for page in _all_pages(store, run.session_id, limit)]
    assert [turn for page in pages for turn in page["turns"]] == full["turns"]
    for page in pages:  # the header is the whole session's on every page
        for key in ("session_id", "status", "tokens", "cost_usd", "repos", "error", "duration_s"):
            assert page[key] == full[key], key
        assert sorted(page["branches"], key=str) == sorted(full["branches"], key=str)
    if limit == 1000:
        assert pages[0]["nodes"] == full["nodes"] and pages[0]["checkpoints"] == full["checkpoints"]


def test_a_replay_pages_through_its_origin_then_its_own_turns(store: SessionStore) -> None:
    run = RecordedRun(store)
    run.run(linear("a", "b"))
    checkpoint = next(
        t for t in api.history(store, run.session_id) if t.type_id == "dev.orchestra.Checkpoint"
    )
    replay = api.fork_session(store, run.session_id, checkpoint.turn_id).session_id
    api.append_record(store, replay, r.PipelineLifecycle(r.LifecycleEvent.RESUMED, "p"))
    pages = _all_pages(store, replay, 2)
    assert [t.turn_id for page in pages for t in page.summary.turns] == [
        t.turn_id for t in session_summary(store, replay).turns
    ]


def test_a_turn_outside_the_session_is_refused(store: SessionStore) -> None:
    run = RecordedRun(store)
    run.run(linear("a"))
    other = RecordedRun(store)
    other.run(linear("b"))
    foreign = api.history(store, other.session_id).__next__().turn_id
    for after in ("abc", "", "-1", foreign, "987654321"):
        with pytest.raises(PageError, match=f"is not a turn of session {run.session_id}"):
            session_page(store, run.session_id, limit=5, after=after)
    with pytest.raises(ValueError, match="at least one turn"):
        session_page(store, run.session_id, limit=0)


class _CountingStore(SqliteSessionStore):
    """Counts the turns the store hands out, and SQLite's virtual machine steps (a measure of rows scanned)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.turns_read = 0
        self.steps = 0
        assert self._connection is not None
        self._connection.set_progress_handler(self._step, 100)

    def _step(self) -> int:
        self.steps += 100
        return 0

    def turns(self, session_id: Id, *, limit: int = 64, before_turn_id: Id | None = None) -> Any:
        page = super().turns(session_id, limit=limit, before_turn_id=before_turn_id)
        self.turns_read += len(page.turns)
        return page

    def turns_after(self, session_id: Id, *, after_turn_id: Id | None = None, limit: int = 64) -> TurnRange:
        found = super().turns_after(session_id, after_turn_id=after_turn_id, limit=limit)
        self.turns_read += len(found.turns)
        return found

    def get_turn(self, session_id: Id, turn_id: Id) -> StoredTurn:
        self.turns_read += 1
        return super().get_turn(session_id, turn_id)


def _page_work(tmp_path: Path, turns: int, where: float) -> tuple[int, int]:
    path = tmp_path / f"{turns}.db"
    with SqliteSessionStore(path) as builder:
        session = build_long_session(builder, turns)
        head = int(builder.get_session(session).head_turn_id or 0)
    with _CountingStore(path) as store:
        after = None if where == 0 else str(int(head - (1 - where) * turns))
        page = session_page(store, session, limit=50, after=after)
        assert len(page.summary.turns) == 50 and page.has_more
        return store.turns_read, store.steps


@pytest.mark.parametrize("where", [0, 0.5, 0.9])
def test_a_page_of_a_long_session_reads_about_a_page(tmp_path: Path, where: float) -> None:
    short_turns, short_steps = _page_work(tmp_path, 2_000, where)
    long_turns, long_steps = _page_work(tmp_path, 20_000, where)
    assert long_turns <= 50 + 2 * 128 + 10  # the page, the header's recent end (read back to a snapshot)
    assert long_turns == short_turns
    assert long_steps < 1.5 * short_steps  # the store scans no more rows for a session ten times as long


def test_a_page_of_a_session_passes_over_the_turns_of_other_sessions(tmp_path: Path) -> None:
    steps = []
    for name, others in (("alone", 0), ("after", 20_000)):
        path = tmp_path / f"{name}.db"
        with SqliteSessionStore(path) as builder:
            if others:
                build_long_session(builder, others)
            session = build_long_session(builder, 500)
        with _CountingStore(path) as store:
            assert len(session_page(store, session, limit=50).summary.turns) == 50
            steps.append(store.steps)
    assert steps[1] < 1.5 * steps[0]  # the session's turns are found by its index, not by scanning the others
