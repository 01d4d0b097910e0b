"""The SessionStore contract: every store (in-memory, SQLite, CXDB, yours) passes these tests unchanged.

Tests tolerate sessions made by other tests in the same store (a real CXDB server is shared), so they
only look at the sessions they create.
"""

from __future__ import annotations

import threading
import uuid
from datetime import datetime
from typing import Any

from orchestra_core.model.records import CheckpointRecord, LifecycleEvent, PipelineLifecycle
from orchestra_core.model.store_errors import (
    BlobNotFoundError,
    BundleConflictError,
    SessionNotFoundError,
    StoreError,
    TurnDataError,
    TurnNotFoundError,
)
from orchestra_core.ports.session_store import Id, SessionMetadata, SessionStatus, SessionStore, TurnAppend
from orchestra_core.session import api
from orchestra_core.session.bundle import bundle_bytes, bundle_id
from orchestra_core.session.codec import decode_record, encode_record
from orchestra_core.testing.contracts._base import PortContract, cases, raises
from orchestra_core.testing.contracts.session_ranges import RANGES, SessionRangesContract
from orchestra_core.testing.contracts.session_samples import RECORDS
from orchestra_core.testing.contracts.session_totals import TOTALS, SessionTotalsContract


def _labels(*names: str) -> Any:
    """Labels as SessionMetadata takes them (typed Any: mypy reads its `converter=tuple` as generic)."""
    return names


EVENT = "test.Event"
META = SessionMetadata(pipeline="pr-review", title="Review PR 42", labels=_labels("ci", "nightly"))


class SessionStoreContract(SessionTotalsContract, SessionRangesContract, PortContract):
    """Behaviour every SessionStore implementation shares.

    A runner implements `make_store()`: an open store (it is closed after each test). Every part of the
    port is basic: runs record forks (parallel branches, replay), blobs (the pipeline's DOT source) and
    the type bundle, from several threads at once. Two capabilities are optional: `totals`
    (`SessionTotalsReader`: running totals per turn, which make `status` of a long session fast) and `ranges`
    (`TurnRangeReader`: forward pages of a history from any turn, which make `status --after` fast).
    """

    OPTIONAL_CAPABILITIES = frozenset({TOTALS, RANGES})

    store: SessionStore

    def make_store(self) -> SessionStore:
        """A store for one test (use `self.tmp` for files and `add_cleanup` for servers)."""
        raise NotImplementedError

    def setup_method(self, method: object = None) -> None:
        super().setup_method(method)
        self.store = self.make_store()
        self.add_cleanup(self.store.close)

    def _events(self, session_id: str, count: int) -> list[str]:
        return [self.store.append(session_id, EVENT, 1, {1: index}).turn_id for index in range(count)]

    def _checkpoint(self, session_id: str, node: str) -> str:
        return api.append_record(self.store, session_id, CheckpointRecord(node, (node,))).turn_id

    def _latest(self, session_id: str, at_turn_id: Id | None = None) -> str | None:
        turn = self.store.latest_checkpoint(session_id, at_turn_id=at_turn_id)
        return None if turn is None else turn.turn_id

    def test_satisfies_the_port(self) -> None:
        assert isinstance(self.store, SessionStore)
        assert self.store.location

    def test_create_session_is_empty_and_keeps_metadata(self) -> None:
        info = self.store.create_session(META)
        assert info.session_id.isdigit()
        assert (info.head_turn_id, info.head_depth, info.turn_count) == (None, 0, 0)
        assert info.status is SessionStatus.NEW
        assert isinstance(info.created_at, datetime) and info.created_at.tzinfo is not None
        again = self.store.get_session(info.session_id)
        assert again.metadata == META
        assert self.store.head(info.session_id).turn_id is None

    def test_ids_are_accepted_as_strings_or_numbers(self) -> None:
        info = self.store.create_session(META)
        first = self.store.append(int(info.session_id), EVENT, 1, {1: 1})
        assert self.store.get_session(int(info.session_id)).head_turn_id == first.turn_id
        assert self.store.get_turn(f" {info.session_id} ", int(first.turn_id)).turn_id == first.turn_id

    @cases(large=("999999999",), letters=("abc",), zero=("0",), negative=("-1",), empty=("",))
    def test_unknown_sessions_are_reported(self, bad: str) -> None:
        with raises(SessionNotFoundError):
            self.store.get_session(bad)
        with raises(SessionNotFoundError):
            self.store.head(bad)
        with raises(SessionNotFoundError):
            self.store.append(bad, EVENT, 1, {1: 1})

    def test_append_builds_a_chain_from_depth_zero(self) -> None:
        info = self.store.create_session(META)
        first = self.store.append(info.session_id, EVENT, 1, {1: "a"})
        second = self.store.append(info.session_id, EVENT, 2, {1: "b"})
        assert (first.parent_turn_id, first.depth) == (None, 0)
        assert (second.parent_turn_id, second.depth, second.type_version) == (first.turn_id, 1, 2)
        assert int(second.turn_id) > int(first.turn_id)
        head = self.store.head(info.session_id)
        assert (head.turn_id, head.depth) == (second.turn_id, 1)
        assert self.store.get_session(info.session_id).turn_count == 2
        assert second.created_at is not None and second.created_at.tzinfo is not None

    def test_append_batch_chains_turns_of_several_sessions_in_order(self) -> None:
        one, two = self.store.create_session(META), self.store.create_session(META)
        before = self.store.append(one.session_id, EVENT, 1, {1: "before"})
        checkpoint = encode_record(CheckpointRecord("a", ("a",)))
        started = encode_record(PipelineLifecycle(LifecycleEvent.STARTED, "p"))
        stored = self.store.append_batch([
            TurnAppend(one.session_id, EVENT, 1, {1: "x"}),
            TurnAppend(two.session_id, started.type_id, started.type_version, started.data),
            TurnAppend(one.session_id, checkpoint.type_id, checkpoint.type_version, checkpoint.data),
        ])  # fmt: skip
        assert stored[0].data == {1: "x"} and stored[0].parent_turn_id == before.turn_id
        assert (stored[2].parent_turn_id, stored[2].depth) == (stored[0].turn_id, 2)
        assert (stored[1].parent_turn_id, stored[1].depth) == (None, 0)
        assert self.store.head(one.session_id).turn_id == stored[2].turn_id
        assert self.store.get_session(two.session_id).status is SessionStatus.RUNNING
        found = self.store.latest_checkpoint(one.session_id)
        assert found is not None and found.turn_id == stored[2].turn_id
        assert self.store.append_batch([]) == []
        aside = self.store.append_batch([TurnAppend(one.session_id, EVENT, 1, {1: "y"}, stored[0].turn_id)])
        assert (aside[0].parent_turn_id, aside[0].depth) == (stored[0].turn_id, 2)
        assert self.store.latest_checkpoint(one.session_id) is None  # the cursor follows the explicit parent

    def test_data_round_trips_exactly(self) -> None:
        info = self.store.create_session(META)
        data: dict[int, Any] = {
            1: "unicode ✓ text",
            2: -(2**63),
            3: 2**64 - 1,
            4: 0.1,
            5: True,
            6: None,
            7: b"\x00\xffbytes",
            8: [1, "two", [3.5, {"k": "v"}]],
            9: {"str": 1, 7: "int key", "nested": {"deep": [False]}},
            29: "",
        }
        turn = self.store.append(info.session_id, EVENT, 1, data)
        assert dict(turn.data) == data
        assert dict(self.store.get_turn(info.session_id, turn.turn_id).data) == data
        assert dict(self.store.turns(info.session_id).turns[-1].data) == data

    def test_large_payloads_round_trip(self) -> None:
        info = self.store.create_session(META)
        text = "".join(f"line {i}: {uuid.UUID(int=i)}\n" for i in range(4000))
        turn = self.store.append(info.session_id, EVENT, 1, {1: text, 2: bytes(range(256)) * 200})
        assert self.store.get_turn(info.session_id, turn.turn_id).data[1] == text
        assert self.store.turns(info.session_id, limit=1).turns[0].data[2] == bytes(range(256)) * 200

    @cases(
        tag_30=({30: "x"},),
        tag_31=({31: "x"},),
        string_tag=({"1": "x"},),
        object_value=({1: object()},),
        tuple_key=({1: {(1, 2): 3}},),
        too_large=({1: 2**64},),
    )
    def test_bad_data_is_refused_and_nothing_is_recorded(self, data: dict[Any, Any]) -> None:
        info = self.store.create_session(META)
        self.store.append(info.session_id, EVENT, 1, {1: 1})
        with raises(TurnDataError):
            self.store.append(info.session_id, EVENT, 1, data)
        assert self.store.get_session(info.session_id).turn_count == 1

    def test_turns_are_paged_from_the_head(self) -> None:
        info = self.store.create_session(META)
        ids = self._events(info.session_id, 10)
        pages = []
        before = None
        while True:
            page = self.store.turns(info.session_id, limit=4, before_turn_id=before)
            pages.append([t.turn_id for t in page.turns])
            if page.next_before_turn_id is None:
                break
            assert page.next_before_turn_id == page.turns[0].turn_id
            before = page.next_before_turn_id
        assert pages == [ids[6:], ids[2:6], ids[:2]]
        assert self.store.turns(info.session_id, limit=0).turns == ()
        assert self.store.turns(self.store.create_session(META).session_id).turns == ()
        assert list(api.history(self.store, info.session_id, page_size=3)) == list(
            reversed(self.store.turns(info.session_id, limit=100).turns)
        )

    def test_fork_shares_history_and_diverges(self) -> None:
        original = self.store.create_session(META)
        ids = self._events(original.session_id, 6)
        fork = self.store.fork_session(ids[3], SessionMetadata(pipeline="pr-review", spawn_reason="replay"))
        assert fork.session_id != original.session_id
        assert (fork.head_turn_id, fork.head_depth) == (ids[3], 3)
        new = self.store.append(fork.session_id, EVENT, 1, {1: "fork"})
        assert (new.parent_turn_id, new.depth) == (ids[3], 4)
        assert [t.turn_id for t in self.store.turns(fork.session_id).turns] == [*ids[:4], new.turn_id]
        assert [t.turn_id for t in self.store.turns(original.session_id).turns] == ids
        assert self.store.get_session(fork.session_id).metadata.spawn_reason == "replay"

    def test_fork_at_an_unknown_turn_is_refused(self) -> None:
        with raises(TurnNotFoundError):
            self.store.fork_session("999999999", META)

    def test_fork_session_helper_records_where_it_came_from(self) -> None:
        original = self.store.create_session(META)
        ids = self._events(original.session_id, 3)
        fork = api.fork_session(self.store, original.session_id, ids[1], title="replay of plan")
        assert fork.head_turn_id == ids[1]
        assert fork.metadata.parent_session_id == original.session_id
        assert (fork.metadata.pipeline, fork.metadata.labels) == (META.pipeline, META.labels)
        assert (fork.metadata.title, fork.metadata.spawn_reason) == ("replay of plan", "replay")

    def test_explicit_parent_branches_inside_a_session(self) -> None:
        info = self.store.create_session(META)
        ids = self._events(info.session_id, 4)
        branch = self.store.append(info.session_id, EVENT, 1, {1: "branch"}, parent_turn_id=ids[1])
        assert (branch.parent_turn_id, branch.depth) == (ids[1], 2)
        assert self.store.head(info.session_id).turn_id == branch.turn_id
        assert [t.turn_id for t in self.store.turns(info.session_id).turns] == [
            ids[0],
            ids[1],
            branch.turn_id,
        ]
        with raises(TurnNotFoundError):
            self.store.append(info.session_id, EVENT, 1, {1: "x"}, parent_turn_id="999999999")

    def test_get_turn_only_finds_turns_of_the_session_history(self) -> None:
        one = self.store.create_session(META)
        other = self.store.create_session(META)
        mine = self._events(one.session_id, 3)
        theirs = self._events(other.session_id, 1)
        turn = self.store.get_turn(one.session_id, mine[0])
        assert (turn.turn_id, turn.type_id, dict(turn.data)) == (mine[0], EVENT, {1: 0})
        for missing in (theirs[0], "999999999", "nope"):
            with raises(TurnNotFoundError):
                self.store.get_turn(one.session_id, missing)

    def test_get_turn_follows_forks_and_branches(self) -> None:
        origin = self.store.create_session(META)
        ids = self._events(origin.session_id, 4)
        fork = self.store.fork_session(ids[2], SessionMetadata(pipeline="pr-review")).session_id
        own = self._events(fork, 2)
        nested = self.store.fork_session(own[0], SessionMetadata(pipeline="pr-review")).session_id
        nested_own = self._events(nested, 1)
        for found in (*ids[:3], own[0], nested_own[0]):
            assert self.store.get_turn(nested, found).turn_id == found
        for missing in (ids[3], own[1]):
            with raises(TurnNotFoundError):
                self.store.get_turn(nested, missing)
        branch = self.store.append(fork, EVENT, 1, {1: "branch"}, parent_turn_id=own[0])
        assert self.store.get_turn(fork, branch.turn_id).turn_id == branch.turn_id
        assert self.store.get_turn(fork, ids[1]).turn_id == ids[1]
        with raises(TurnNotFoundError):
            self.store.get_turn(fork, own[1])
        with raises(TurnNotFoundError):
            self.store.get_turn(origin.session_id, own[0])

    def test_latest_checkpoint_follows_the_head(self) -> None:
        info = self.store.create_session(META)
        assert self.store.latest_checkpoint(info.session_id) is None
        self._events(info.session_id, 2)
        assert self.store.latest_checkpoint(info.session_id) is None
        first = self._checkpoint(info.session_id, "a")
        assert self._latest(info.session_id) == first
        after_first = self._events(info.session_id, 3)
        assert self._latest(info.session_id) == first
        second = self._checkpoint(info.session_id, "b")
        self._events(info.session_id, 1)
        found = api.latest_checkpoint(self.store, info.session_id)
        assert found is not None and found.turn.turn_id == second and found.checkpoint.current_node == "b"
        assert self._latest(info.session_id, at_turn_id=after_first[1]) == first
        assert self._latest(info.session_id, at_turn_id=second) == second
        with raises(TurnNotFoundError):
            self.store.latest_checkpoint(info.session_id, at_turn_id="999999999")

    def test_latest_checkpoint_in_forks_and_branches(self) -> None:
        info = self.store.create_session(META)
        first = self._checkpoint(info.session_id, "a")
        between = self._events(info.session_id, 1)[0]
        second = self._checkpoint(info.session_id, "b")
        fork = self.store.fork_session(between, META)
        assert self._latest(fork.session_id) == first
        self._events(fork.session_id, 2)
        assert self._latest(fork.session_id) == first
        own = self._checkpoint(fork.session_id, "c")
        assert self._latest(fork.session_id) == own
        assert self._latest(info.session_id) == second
        self.store.append(info.session_id, EVENT, 1, {1: "branch"}, parent_turn_id=between)
        assert self._latest(info.session_id) == first

    def test_status_follows_lifecycle_turns(self) -> None:
        info = self.store.create_session(META)
        api.append_record(self.store, info.session_id, PipelineLifecycle(LifecycleEvent.STARTED, "pr-review"))
        running = self._events(info.session_id, 1)[0]
        assert self.store.get_session(info.session_id).status is SessionStatus.RUNNING
        api.append_record(
            self.store, info.session_id, PipelineLifecycle(LifecycleEvent.COMPLETED, "pr-review")
        )
        assert self.store.get_session(info.session_id).status is SessionStatus.SUCCESS
        fork = self.store.fork_session(running, META)
        assert self.store.get_session(fork.session_id).status is SessionStatus.RUNNING
        api.append_record(self.store, fork.session_id, PipelineLifecycle(LifecycleEvent.FAILED, "pr-review"))
        assert self.store.get_session(fork.session_id).status is SessionStatus.FAIL
        listed = {s.session_id: s for s in self.store.list_sessions(limit=1000)}
        assert listed[info.session_id].status is SessionStatus.SUCCESS
        assert listed[fork.session_id].status is SessionStatus.FAIL

    def test_list_sessions_newest_activity_first_with_metadata(self) -> None:
        older = self.store.create_session(SessionMetadata(pipeline="one", labels=_labels("x")))
        newer = self.store.create_session(SessionMetadata(pipeline="two", title="T"))
        self.store.append(newer.session_id, EVENT, 1, {1: 1})
        self.store.append(older.session_id, EVENT, 1, {1: 1})
        listed = [
            s
            for s in self.store.list_sessions(limit=1000)
            if s.session_id in (older.session_id, newer.session_id)
        ]
        assert [s.session_id for s in listed] == [older.session_id, newer.session_id]
        assert listed[0].metadata == SessionMetadata(pipeline="one", labels=_labels("x"))
        assert listed[1].metadata == SessionMetadata(pipeline="two", title="T")
        updated, created = listed[0].updated_at, listed[0].created_at
        assert updated is not None and created is not None and updated >= created
        assert len(self.store.list_sessions(limit=1)) == 1

    def test_blobs_are_content_addressed_by_blake3(self) -> None:
        expected = "0c82c44eaf4c3639df7c38503f60a5b609679ddc490c20ea74b4e514a4c25abf"
        assert self.store.put_blob(b"hello blob") == expected
        assert self.store.put_blob(b"hello blob") == expected
        assert self.store.get_blob(expected) == b"hello blob"
        assert self.store.get_blob(expected.upper()) == b"hello blob"
        big = bytes(range(256)) * 256
        assert self.store.get_blob(self.store.put_blob(big)) == big
        assert self.store.get_blob(self.store.put_blob(b"")) == b""

    @cases(zeros=("0" * 64,), not_hex=("xyz",), empty=("",))
    def test_missing_blobs_are_reported(self, bad: str) -> None:
        with raises(BlobNotFoundError):
            self.store.get_blob(bad)

    def test_bundles_publish_idempotently(self) -> None:
        self.store.publish_bundle(bundle_bytes())
        assert self.store.publish_bundle(bundle_bytes()) is False
        assert api.publish_types(self.store) is False
        assert self.store.get_bundle(bundle_id()) == bundle_bytes()
        unique = f"test.bundle.{uuid.uuid4().hex}"
        body = b'{"registry_version":1,"bundle_id":"%s","types":{}}' % unique.encode()
        assert self.store.publish_bundle(body) is True
        assert self.store.get_bundle(unique) == body
        with raises(BundleConflictError):
            self.store.publish_bundle(body.replace(b"{}", b"{ }"))
        assert self.store.get_bundle(f"test.bundle.{uuid.uuid4().hex}") is None

    def test_every_turn_type_round_trips_through_the_store(self) -> None:
        info = self.store.create_session(META)
        ids = [api.append_record(self.store, info.session_id, record).turn_id for record in RECORDS]
        stored = {t.turn_id: t for t in self.store.turns(info.session_id, limit=100).turns}
        assert [decode_record(stored[turn_id]) for turn_id in ids] == list(RECORDS)

    def test_concurrent_appends_from_threads_all_land(self) -> None:
        store = self.store
        shared = store.create_session(META)
        own = [store.create_session(META) for _ in range(3)]

        def work(index: int) -> None:
            for n in range(15):
                store.append(shared.session_id, EVENT, 1, {1: index, 2: n})
                store.append(own[index].session_id, EVENT, 1, {1: n})

        threads = [threading.Thread(target=work, args=(i,)) for i in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert store.get_session(shared.session_id).turn_count == 45
        chain = store.turns(shared.session_id, limit=100).turns
        assert sorted((t.data[1], t.data[2]) for t in chain) == [(i, n) for i in range(3) for n in range(15)]
        for session in own:
            assert [t.data[1] for t in store.turns(session.session_id).turns] == list(range(15))

    def test_a_closed_store_refuses_work(self) -> None:
        info = self.store.create_session(META)
        self.store.close()
        with raises(StoreError):
            self.store.get_session(info.session_id)
