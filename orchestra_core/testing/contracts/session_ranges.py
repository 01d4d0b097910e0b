"""The SessionStore contract's optional `ranges` capability (`TurnRangeReader`): forward pages of a history."""

from __future__ import annotations

from orchestra_core.model.store_errors import SessionNotFoundError, TurnNotFoundError
from orchestra_core.ports.session_store import SessionMetadata, SessionStore, TurnRange, TurnRangeReader
from orchestra_core.testing.contracts._base import raises, requires

RANGES = "ranges"


class SessionRangesContract:
    """Tests of the `ranges` capability, mixed into the SessionStore contract."""

    store: SessionStore

    def _ranges(self) -> TurnRangeReader:
        assert isinstance(self.store, TurnRangeReader)
        return self.store

    def _line(self, session_id: str, count: int, *, start: int = 0) -> list[str]:
        return [self.store.append(session_id, "t.Step", 1, {1: start + n}).turn_id for n in range(count)]

    def _ids(self, found: TurnRange) -> list[str]:
        return [turn.turn_id for turn in found.turns]

    @requires(RANGES)
    def test_pages_forward_from_the_root_to_the_head(self) -> None:
        session = self.store.create_session(SessionMetadata(pipeline="ranges")).session_id
        ids = self._line(session, 7)
        first = self._ranges().turns_after(session, limit=3)
        assert self._ids(first) == ids[:3] and first.has_more
        assert [turn.data[1] for turn in first.turns] == [0, 1, 2]
        second = self._ranges().turns_after(session, after_turn_id=ids[2], limit=3)
        assert self._ids(second) == ids[3:6] and second.has_more
        last = self._ranges().turns_after(session, after_turn_id=ids[5], limit=3)
        assert self._ids(last) == ids[6:] and not last.has_more
        assert self._ranges().turns_after(session, after_turn_id=ids[6], limit=3) == TurnRange((), False)
        exact = self._ranges().turns_after(session, after_turn_id=ids[3], limit=3)
        assert self._ids(exact) == ids[4:] and not exact.has_more

    @requires(RANGES)
    def test_an_empty_session_and_an_empty_limit_give_empty_ranges(self) -> None:
        session = self.store.create_session(SessionMetadata(pipeline="ranges")).session_id
        assert self._ranges().turns_after(session) == TurnRange((), False)
        self._line(session, 2)
        assert self._ranges().turns_after(session, limit=0) == TurnRange((), False)

    @requires(RANGES)
    def test_a_fork_pages_through_the_shared_history_then_its_own(self) -> None:
        origin = self.store.create_session(SessionMetadata(pipeline="ranges")).session_id
        shared = self._line(origin, 4)
        fork = self.store.fork_session(shared[1], SessionMetadata(pipeline="ranges")).session_id
        self._line(origin, 2, start=10)  # the origin goes on: not in the fork's history
        own = self._line(fork, 3, start=20)
        found = self._ranges().turns_after(fork, limit=10)
        assert self._ids(found) == [*shared[:2], *own] and not found.has_more
        assert self._ids(self._ranges().turns_after(fork, after_turn_id=shared[0], limit=2)) == [
            shared[1],
            own[0],
        ]
        # Ids from another line of the run (a cursor shared with a branch) start the range after them.
        assert self._ids(self._ranges().turns_after(fork, after_turn_id=shared[3], limit=10)) == own

    @requires(RANGES)
    def test_a_turn_hung_off_an_older_turn_pages_along_the_head_chain(self) -> None:
        session = self.store.create_session(SessionMetadata(pipeline="ranges")).session_id
        ids = self._line(session, 4)
        retry = self.store.append(session, "t.Step", 1, {1: 99}, parent_turn_id=ids[1]).turn_id
        after = self._line(session, 2, start=100)
        found = self._ranges().turns_after(session, limit=10)
        assert self._ids(found) == [*ids[:2], retry, *after] and not found.has_more
        assert self._ids(self._ranges().turns_after(session, after_turn_id=ids[0], limit=2)) == [
            ids[1],
            retry,
        ]

    @requires(RANGES)
    def test_unknown_sessions_and_turns_are_refused(self) -> None:
        session = self.store.create_session(SessionMetadata(pipeline="ranges")).session_id
        with raises(SessionNotFoundError):
            self._ranges().turns_after("987654321")
        with raises(TurnNotFoundError):
            self._ranges().turns_after(session, after_turn_id="987654321")
