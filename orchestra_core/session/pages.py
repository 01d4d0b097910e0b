"""Pages of a session's turns: what `orchestra status SESSION --limit N --after TURN` shows, read with a bound.

A page holds the turns after a given one (from the start without one), main line and parallel branches merged in
append order, at most `limit` of them; the rest of the document (status, counts, tokens, cost, repos, ending) is
the whole session's, from the running totals the store keeps and its recent end (`session.recent`). A store that
reads ranges (`TurnRangeReader`) reads about `limit` turns per line, however long the session; others are walked
back from the head.
"""

from __future__ import annotations

from typing import Any

from attrs import evolve, frozen

from orchestra_core.model.store_errors import TurnNotFoundError
from orchestra_core.ports.session_locks import SessionLocks
from orchestra_core.ports.session_store import (
    Id,
    SessionStore,
    SessionTotalsReader,
    StoredTurn,
    TurnRange,
    TurnRangeReader,
)
from orchestra_core.session.api import history
from orchestra_core.session.identifiers import parse_id
from orchestra_core.session.recent import RecentLimits, branch_lines, recent_session_summary
from orchestra_core.session.summary import FINISHED, SessionSummary, session_summary
from orchestra_core.session.timeline import Timeline
from orchestra_core.session.turn_view import TurnView

_HEADER_ONLY = RecentLimits(node_runs=0, agent_turns=0, checkpoints=0)


class PageError(TurnNotFoundError):
    """The page asked for does not exist: `after` is not a turn of the session (or of its branches)."""


@frozen
class SessionPage:
    """A session's summary whose turns are one page, and where the next page starts.

    Attributes:
        summary: The whole session's header, counts and repos; `turns` the page's turns, `nodes` the node runs
            that started in it, `checkpoints`/`snapshots` those in it.
        after: The turn the page starts after (None: from the start, or a page read back from `before`).
        limit: The most turns a page holds.
        has_more: More turns follow the page.
        has_earlier: Turns come before the page.
        before: For a page read backwards, the turn it ends before (None: at the session's end).
    """

    summary: SessionSummary
    after: str | None
    limit: int
    has_more: bool
    has_earlier: bool = False
    before: str | None = None

    @property
    def next_after(self) -> str | None:
        """The `--after` value of the next page (the page's last turn), None when no turn follows."""
        return self.summary.turns[-1].turn_id if self.has_more and self.summary.turns else None

    @property
    def next_before(self) -> str | None:
        """Where the page before this one ends (the page's first turn), None when no turn comes before it."""
        return self.summary.turns[0].turn_id if self.has_earlier and self.summary.turns else None

    def to_json(self) -> dict[str, Any]:
        """`orchestra status SESSION --json --limit N [--after TURN]`'s document: the session document with the
        page's turns, and `page`, `has_more`, `next_after`, `has_earlier` and `next_before`."""
        return {
            **self.summary.to_json(),
            "page": {"after": self.after, "before": self.before, "limit": self.limit},
            "has_more": self.has_more,
            "next_after": self.next_after,
            "has_earlier": self.has_earlier,
            "next_before": self.next_before,
        }


def session_page(
    store: SessionStore,
    session_id: Id,
    locks: SessionLocks | None = None,
    *,
    limit: int,
    after: Id | None = None,
) -> SessionPage:
    """One page of a session's turns, with the whole session's header and counts.

    Raises:
        SessionNotFoundError: No such session.
        PageError: `after` is not a turn of the session's history or of one of its branch sessions.
        ValueError: `limit` is below 1.
        TurnDataError: A dev.orchestra turn cannot be decoded.
    """
    if limit < 1:
        raise ValueError("a page holds at least one turn")
    header = recent_session_summary(store, session_id, locks, limits=_HEADER_ONLY)
    lines = [(header.info.session_id, None), *((b.session_id, b.branch) for b in header.branches)]
    floor = checked_after(store, lines, after)
    views, has_more = merged_range(store, lines, floor, limit)
    page = tuple(views)
    timeline = Timeline()
    timeline.add(page)
    if header.info.status in FINISHED and not has_more:
        timeline.close()
    summary = evolve(header, turns=page, nodes=timeline.runs(), counts=header.totals)
    return SessionPage(summary, floor, limit, has_more, has_earlier=floor is not None and bool(page))


def latest_page(
    store: SessionStore,
    session_id: Id,
    locks: SessionLocks | None = None,
    *,
    limit: int,
    before: Id | None = None,
) -> SessionPage:
    """The session's recent end (what the web view shows first), or the `limit` turns before `before`.

    Without `before`: the recent summary (`session.recent`) holding the last `limit` agent turns and node runs,
    whatever turns lie between them. With it: the whole session's header and the `limit` turns before it.

    Raises:
        SessionNotFoundError: No such session.
        PageError: `before` is not a turn of the session's history or of one of its branch sessions.
        ValueError: `limit` is below 1.
    """
    if limit < 1:
        raise ValueError("a page holds at least one turn")
    if before is None:
        recent = recent_session_summary(store, session_id, locks, limits=RecentLimits(limit, limit, 0))
        lines = [(recent.info.session_id, None), *((b.session_id, b.branch) for b in recent.branches)]
        first = recent.turns[0].turn_id if recent.turns else None
        earlier = first is not None and bool(earlier_range(store, lines, first, 1)[0])
        return SessionPage(recent, None, limit, False, has_earlier=earlier)
    header = recent_session_summary(store, session_id, locks, limits=_HEADER_ONLY)
    lines = [(header.info.session_id, None), *((b.session_id, b.branch) for b in header.branches)]
    end = checked_after(store, lines, before)
    assert end is not None
    views, has_earlier = earlier_range(store, lines, end, limit)
    timeline = Timeline()
    timeline.add(views)
    summary = evolve(header, turns=tuple(views), nodes=timeline.runs(), counts=header.totals)
    return SessionPage(summary, None, limit, True, has_earlier=has_earlier, before=end)


def run_lines(store: SessionStore, session_id: Id) -> list[tuple[str, str | None]]:
    """The run's lines: the session (branch None), then its branch sessions (nested ones too) with their labels.

    Raises:
        SessionNotFoundError: No such session.
    """
    main = store.get_session(session_id).session_id
    if isinstance(store, SessionTotalsReader):
        return [(main, None), *((info.session_id, label) for info, label in branch_lines(store, main))]
    return [(main, None), *((b.session_id, b.branch) for b in session_summary(store, main).branches)]


def merged_range(
    store: SessionStore, lines: list[tuple[str, str | None]], after: str | None, limit: int
) -> tuple[list[TurnView], bool]:
    """The first `limit` turns of the run's `lines` with ids above `after`, in append order, and whether more
    follow; each line reads at most `limit` (+1) turns."""
    views: dict[str, TurnView] = {}
    has_more = False
    for line_id, branch in lines:  # a branch's history shares its parent's turns: they keep the parent's line
        found = _range(store, line_id, after, limit)
        for turn in found.turns:
            if turn.turn_id not in views:
                views[turn.turn_id] = TurnView.of(turn, line_id, branch)
        has_more = has_more or found.has_more
    ordered = sorted(views.values(), key=lambda view: int(view.turn_id))
    return ordered[:limit], has_more or len(ordered) > limit


def earlier_range(
    store: SessionStore, lines: list[tuple[str, str | None]], before: str, limit: int
) -> tuple[list[TurnView], bool]:
    """The last `limit` turns of the run's `lines` with ids below `before`, in append order, and whether earlier
    ones exist. The line holding `before` is read back from it; the others from their heads (a branch's own turns
    after `before` are passed over)."""
    views: dict[str, TurnView] = {}
    for line_id, branch in lines:
        try:
            start: str | None = store.get_turn(line_id, before).turn_id
        except TurnNotFoundError:
            start = None
        taken = 0
        for turn in history(store, line_id, page_size=limit + 1, start_before=start):
            if int(turn.turn_id) >= int(before):
                continue
            if taken > limit:
                break
            taken += 1
            if turn.turn_id not in views:
                views[turn.turn_id] = TurnView.of(turn, line_id, branch)
    ordered = sorted(views.values(), key=lambda view: int(view.turn_id))
    return ordered[-limit:], len(ordered) > limit


def checked_after(store: SessionStore, lines: list[tuple[str, str | None]], after: Id | None) -> str | None:
    """`after` as a turn id, once it is found in the history of one of the run's lines (the session's, or one of
    its branch sessions').

    Raises:
        PageError: It is not.
    """
    if after is None:
        return None
    wanted = str(after).strip()
    if parse_id(wanted) is not None:
        for line_id, _branch in lines:
            try:
                return store.get_turn(line_id, wanted).turn_id
            except TurnNotFoundError:
                continue
    main = lines[0][0]
    raise PageError(
        f"turn {wanted!r} is not a turn of session {main} (orchestra status {main} --json lists its turns)"
    )


def _range(store: SessionStore, session_id: str, after: str | None, limit: int) -> TurnRange:
    """The first `limit` turns of a history after `after`: read by range when the store can, else walked back."""
    if isinstance(store, TurnRangeReader):
        return store.turns_after(session_id, after_turn_id=after, limit=limit)
    floor = -1 if after is None else int(after)
    newer: list[StoredTurn] = []
    for turn in history(store, session_id):
        if int(turn.turn_id) <= floor:
            break
        newer.append(turn)
    newer.reverse()
    return TurnRange(tuple(newer[:limit]), len(newer) > limit)
