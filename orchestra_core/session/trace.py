"""A session and its branch sessions read as one stream of turns: what `status` summarizes and `attach` follows.

Parallel branches and child runs record into sessions forked from their parent line, so a run is a main
session plus branch sessions. A branch session shares its parent's history up to the fork; only its own
turns (those after the fork) belong to the branch. Branch sessions are found through the ParallelExecution
turns that name them and, while a fan-out or a manager loop runs (or once after one was seen), through the
store's session list (forks record their parent session and the spawn reason "parallel").
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

from attrs import define

from orchestra_core.model import records as r
from orchestra_core.model.store_errors import SessionNotFoundError, TurnNotFoundError
from orchestra_core.ports.session_store import SessionInfo, SessionStore, StoredTurn
from orchestra_core.session.api import history, turns_after
from orchestra_core.session.identifiers import parse_id
from orchestra_core.session.turn_view import TurnView

PARALLEL_SPAWN = "parallel"
BRANCH_TITLE_PREFIX = "branch "
FORKING_HANDLERS = ("parallel", "stack.manager_loop")
ENDING_EVENTS = (
    r.LifecycleEvent.COMPLETED, r.LifecycleEvent.FAILED, r.LifecycleEvent.INTERRUPTED, r.LifecycleEvent.CANCELLED,
    r.LifecycleEvent.BUDGET_EXCEEDED,
)
DISCOVERY_LIMIT = 200
_BRANCH_PAGE = 64


@define
class Line:
    """One session of the run: the main session (branch None) or a branch session, and how far it was read."""

    info: SessionInfo
    branch: str | None
    last_turn_id: str | None = None

    @property
    def session_id(self) -> str:
        return self.info.session_id


class SessionTrace:
    """Reads a session and its branch sessions turn by turn; each `read()` returns what is new.

    Attributes:
        info: The main session as it was when the trace was opened.
        fork_turn_id: For a forked main session (a replay): the turn of its origin it was forked at.
        last_event: The main line's latest lifecycle event (None before the run started).
    """

    def __init__(
        self, store: SessionStore, session_id: str, *, discovery_limit: int = DISCOVERY_LIMIT, brief: bool = False
    ) -> None:
        """Open the trace of a session; `brief` reads AgentTurns without their tool calls, files and commits.

        Raises:
            SessionNotFoundError: No such session.
        """
        self._store = store
        self._discovery_limit = discovery_limit
        self._brief = brief
        self.info = store.get_session(session_id)
        self._main = Line(self.info, None)
        self._lines: dict[str, Line] = {}
        self._forking: set[tuple[str, str]] = set()
        self._fork_seen = False
        self.fork_turn_id: str | None = None
        self.last_event: r.LifecycleEvent | None = None

    @property
    def ended(self) -> bool:
        """Whether the main line's latest lifecycle turn says the run completed, failed or was interrupted."""
        return self.last_event in ENDING_EVENTS

    @property
    def lines(self) -> list[Line]:
        """The main session and the branch sessions found so far, in the order they were found."""
        return list(self._lines.values())

    def read(self) -> list[TurnView]:
        """The turns appended since the last read (the whole history on the first), in append order.

        Raises:
            StoreError: The store cannot be read.
        """
        if not self._lines:
            self._lines[self._main.session_id] = self._main
            views = self._first_read_of_main()
        else:
            views = [view for line in self.lines for view in self._read_line(line)]
        views.sort(key=_append_order)
        self._note(views)
        found = self._discover(views)
        if found:
            views.extend(found)
            views.sort(key=_append_order)
        return views

    # Reading lines -----------------------------------------------------------------------------------
    def _first_read_of_main(self) -> list[TurnView]:
        line = self._main
        boundary = _ForkBoundary(self._store, line.info)
        views: list[TurnView] = []
        looking = line.info.metadata.parent_session_id is not None
        for turn in history(self._store, line.session_id):
            if looking and boundary.inherited(turn):
                self.fork_turn_id, looking = turn.turn_id, False
            views.append(TurnView.of(turn, line.session_id, brief=self._brief))
        views.reverse()
        line.last_turn_id = views[-1].turn_id if views else None
        return views

    def _read_line(self, line: Line) -> list[TurnView]:
        if line.last_turn_id is None and line is not self._main:
            turns = list(_own_turns(self._store, line.info))
        else:
            turns = turns_after(self._store, line.session_id, line.last_turn_id)
        if turns:
            line.last_turn_id = turns[-1].turn_id
        return [TurnView.of(turn, line.session_id, line.branch, brief=self._brief) for turn in turns]

    # Keeping track of fan-outs and the run's end -----------------------------------------------------
    def _note(self, views: list[TurnView]) -> None:
        """Follow fan-outs and the run's end through `views`, which are in append order."""
        for view in views:
            record = view.record
            if isinstance(record, r.NodeExecution) and record.handler_type in FORKING_HANDLERS:
                key = (view.session_id, record.node_id)
                if record.event in (r.NodeEvent.STARTED, r.NodeEvent.RETRYING):
                    self._forking.add(key)
                    self._fork_seen = True
                else:
                    self._forking.discard(key)
            elif isinstance(record, r.PipelineLifecycle) and view.session_id == self._main.session_id:
                self.last_event = record.event
                if self.ended:
                    self._forking.clear()

    # Finding branch sessions -------------------------------------------------------------------------
    def _discover(self, views: list[TurnView]) -> list[TurnView]:
        """Open the branch sessions that turns name or the session list shows; return their turns."""
        found: list[TurnView] = []
        pending = views
        listed: list[SessionInfo] | None = None
        while True:
            new_lines = self._named_lines(pending)
            if self._forking or self._fork_seen:
                if listed is None:
                    listed = self._store.list_sessions(limit=self._discovery_limit)
                new_lines += self._listed_lines(listed)
            if not new_lines:
                self._fork_seen = False
                return found
            pending = sorted((view for line in new_lines for view in self._read_line(line)), key=_append_order)
            self._note(pending)
            found.extend(pending)

    def _named_lines(self, views: list[TurnView]) -> list[Line]:
        lines = []
        for view in views:
            record = view.record
            if not isinstance(record, r.ParallelExecution):
                continue
            for session_id in (record.branch_session_id, *record.branch_session_ids):
                if session_id and session_id not in self._lines:
                    try:
                        info = self._store.get_session(session_id)
                    except SessionNotFoundError:
                        continue
                    lines.append(self._open(info))
        return lines

    def _listed_lines(self, listed: list[SessionInfo]) -> list[Line]:
        lines: list[Line] = []
        added = True
        while added:  # a nested branch's parent may be a branch found in this same pass
            added = False
            for info in listed:
                if (
                    info.session_id not in self._lines
                    and info.metadata.spawn_reason == PARALLEL_SPAWN
                    and info.metadata.parent_session_id in self._lines
                ):
                    lines.append(self._open(info))
                    added = True
        return lines

    def _open(self, info: SessionInfo) -> Line:
        line = Line(info, branch_label(info))
        self._lines[info.session_id] = line
        return line


def branch_label(info: SessionInfo) -> str:
    """A branch session's path (`fan:left`, `fan:left/inner:x`, `manager.child`) from its title."""
    title = info.metadata.title
    return title[len(BRANCH_TITLE_PREFIX):] if title.startswith(BRANCH_TITLE_PREFIX) else f"session {info.session_id}"


def _own_turns(store: SessionStore, info: SessionInfo) -> Iterator[StoredTurn]:
    """A forked session's own turns (after the fork), oldest first, read back only as far as the fork."""
    boundary = _ForkBoundary(store, info)
    own = []
    for turn in history(store, info.session_id, page_size=_BRANCH_PAGE):
        if boundary.inherited(turn):
            break
        own.append(turn)
    return reversed(own)


class _ForkBoundary:
    """Tells a forked session's inherited turns from its own, newest first, by the time of the fork.

    Inherited turns were appended before the session was forked, its own turns after. Times are compared
    in milliseconds (what the stores keep); a turn from the fork's own millisecond is looked up in the
    parent session's history.
    """

    def __init__(self, store: SessionStore, info: SessionInfo) -> None:
        self._store = store
        self._parent = info.metadata.parent_session_id
        self._forked_ms = _milliseconds(info.created_at)

    def inherited(self, turn: StoredTurn) -> bool:
        if self._parent is None or self._forked_ms is None or turn.created_at is None:
            return False
        appended_ms = _milliseconds(turn.created_at)
        assert appended_ms is not None
        if appended_ms != self._forked_ms:
            return appended_ms < self._forked_ms
        try:
            self._store.get_turn(self._parent, turn.turn_id)
        except (TurnNotFoundError, SessionNotFoundError):
            return False
        return True


def _milliseconds(moment: datetime | None) -> int | None:
    return None if moment is None else int(moment.timestamp() * 1000)


def _append_order(view: TurnView) -> int:
    return parse_id(view.turn_id) or 0
