"""The web view's index of a session (time and money per node, the node's commits): read once a page at a time,
then only the turns appended since, and adding up to what `orchestra status` says."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from orchestra_adapters.server.session_index import MAX_BARS, SessionIndexes
from orchestra_adapters.storage.sqlite_store import SqliteSessionStore
from orchestra_core.model import records as r
from orchestra_core.session.summary import session_summary
from tests.support.long_sessions import _appends, _visit, build_long_session


class CountingStore:
    """A store that counts the turns its range reads hand out."""

    def __init__(self, inner: SqliteSessionStore) -> None:
        self.inner = inner
        self.read = 0

    def turns_after(self, session_id: str, **kwargs: Any) -> Any:
        found = self.inner.turns_after(session_id, **kwargs)
        self.read += len(found.turns)
        return found

    def session_totals(self, session_id: str, *, own: bool = False) -> Any:
        return self.inner.session_totals(session_id, own=own)

    def child_sessions(self, session_id: str) -> Any:
        return self.inner.child_sessions(session_id)

    def fork_point(self, session_id: str) -> Any:
        return self.inner.fork_point(session_id)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_a_long_session_is_read_once_then_only_what_was_appended(tmp_path: Path) -> None:
    with SqliteSessionStore(tmp_path / "orchestra.db") as inner:
        session = build_long_session(inner, 3_000)
        store = CountingStore(inner)
        indexes = SessionIndexes()
        first = indexes.read(store, session, lambda index: index.to_json())
        assert store.read >= 2_900

        summary = session_summary(inner, session)
        assert first["totals"]["tokens"]["total_tokens"] == summary.tokens.total_tokens
        assert first["totals"]["agent_turns"] == len(summary.agent_turns)
        assert len(first["bars"]) == MAX_BARS and len(first["nodes"]) == 50
        assert sum(node["runs"] for node in first["nodes"]) == len(summary.nodes)

        store.read = 0
        inner.append_batch(_appends(session, _visit(9_999)))
        again = indexes.read(store, session, lambda index: index.to_json())
        assert store.read <= 20  # the new visit's turns, not the session again
        assert again["totals"]["agent_turns"] == first["totals"]["agent_turns"] + 3
        node = next(n for n in again["nodes"] if n["node_id"] == "n49")
        assert node["runs"] == next(n for n in first["nodes"] if n["node_id"] == "n49")["runs"] + 1
        assert again["bars"][-1]["node_id"] == "n49" and again["bars"][-1]["status"] == "success"


def test_a_running_node_is_an_open_bar(tmp_path: Path) -> None:
    with SqliteSessionStore(tmp_path / "orchestra.db") as store:
        session = build_long_session(store, 20)
        store.append_batch(_appends(session, [r.NodeExecution("late", r.NodeEvent.STARTED, "codergen")]))
        document = SessionIndexes().read(store, session, lambda index: index.to_json())
    last = document["bars"][-1]
    assert (last["node_id"], last["status"], last["ended_at"]) == ("late", "running", None)
