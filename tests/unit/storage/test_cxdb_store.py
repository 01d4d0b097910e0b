"""CxdbSessionStore specifics: no blind append retries, reconnects, metadata on CXDB, O(1) resume, fail fast."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import msgpack
import pytest
import requests

from orchestra_adapters.storage.cxdb.connection import parse_address
from orchestra_adapters.storage.cxdb.store import CxdbSessionStore
from orchestra_adapters.storage.cxdb.turns import facts_from_http
from orchestra_core.model.records import CheckpointRecord, LifecycleEvent, PipelineLifecycle
from orchestra_core.model.store_errors import StoreError, StoreUnavailableError
from orchestra_core.ports.session_store import SessionMetadata
from orchestra_core.session import api
from orchestra_core.session.bundle import bundle_bytes
from orchestra_core.session.catalog import spec_for_record
from tests.contracts.session_store.samples import RECORDS
from tests.support.cxdb_server import FakeCxdbServer

META = SessionMetadata(pipeline="pr-review", title="Review PR 42", labels=("ci",))


@pytest.fixture
def server() -> Iterator[FakeCxdbServer]:
    with FakeCxdbServer() as fake:
        yield fake


@pytest.fixture
def store(server: FakeCxdbServer) -> Iterator[CxdbSessionStore]:
    with CxdbSessionStore(server.addr, server.url) as cxdb:
        yield cxdb


def _chain(server: FakeCxdbServer, session_id: str) -> list[int]:
    context = server.state.contexts[int(session_id)]
    return [t.turn_id for t in server.state.chain(context.head_turn_id, 1000)]


def test_a_drop_after_the_append_landed_is_not_retried(
    store: CxdbSessionStore, server: FakeCxdbServer
) -> None:
    info = store.create_session(META)
    store.append(info.session_id, "t.E", 1, {1: "first"})
    server.faults.drop_after_append = 1
    landed = store.append(info.session_id, "t.E", 1, {1: "second"})
    assert len(_chain(server, info.session_id)) == 2
    assert store.head(info.session_id).turn_id == landed.turn_id
    assert store.get_turn(info.session_id, landed.turn_id).data == {1: "second"}


def test_a_drop_before_the_append_is_sent_once_more(store: CxdbSessionStore, server: FakeCxdbServer) -> None:
    info = store.create_session(META)
    server.faults.drop_before_append = 1
    turn = store.append(info.session_id, "t.E", 1, {1: "only"})
    assert _chain(server, info.session_id) == [int(turn.turn_id)]


def test_an_append_that_keeps_failing_is_reported_and_not_recorded(
    store: CxdbSessionStore, server: FakeCxdbServer
) -> None:
    info = store.create_session(META)
    server.faults.drop_before_append = 2
    with pytest.raises(StoreError, match="failed"):
        store.append(info.session_id, "t.E", 1, {1: "lost"})
    assert _chain(server, info.session_id) == []
    assert store.append(info.session_id, "t.E", 1, {1: "next"}).depth == 0


def test_the_store_reconnects_with_a_new_hello_after_a_drop(
    store: CxdbSessionStore, server: FakeCxdbServer
) -> None:
    info = store.create_session(META)
    with pytest.raises(StoreError):
        store.get_blob("ab" * 32)  # CXDB drops the connection for a missing blob
    hellos = server.state.counts["HELLO"]
    assert store.append(info.session_id, "t.E", 1, {1: 1}).depth == 0
    assert server.state.counts["HELLO"] == hellos + 1


def test_metadata_travels_in_key_30_of_the_first_turn(
    store: CxdbSessionStore, server: FakeCxdbServer
) -> None:
    info = store.create_session(META)
    store.append(info.session_id, "t.E", 1, {1: 1})
    store.append(info.session_id, "t.E", 1, {1: 2})
    listed = requests.get(f"{server.url}/v1/contexts", timeout=5).json()["contexts"]
    item = next(c for c in listed if c["context_id"] == info.session_id)
    assert item["client_tag"] == "orchestra"
    first = server.state.chain(int(item["head_turn_id"]), 2)[0]
    metadata = msgpack.unpackb(server.state.blobs[first.content_hash], strict_map_key=False)[30]
    assert (metadata[2], metadata[3], metadata[100]) == ("Review PR 42", ["ci"], "pr-review")
    with CxdbSessionStore(server.addr, server.url) as other_process:
        assert other_process.get_session(info.session_id).metadata == META


def test_resume_reads_the_head_and_one_blob_not_the_history(server: FakeCxdbServer) -> None:
    with CxdbSessionStore(server.addr, server.url) as writer:
        info = writer.create_session(META)
        api.append_record(writer, info.session_id, PipelineLifecycle(LifecycleEvent.STARTED, "pr-review"))
        checkpoint = api.append_record(writer, info.session_id, CheckpointRecord("plan", ("plan",), {"k": "v"}))
        for n in range(300):
            writer.append(info.session_id, "t.E", 1, {1: n})
    server.state.counts.clear()
    with CxdbSessionStore(server.addr, server.url) as reader:
        found = api.latest_checkpoint(reader, info.session_id)
    assert found is not None and found.turn.turn_id == checkpoint.turn_id
    assert (found.turn.parent_turn_id, found.turn.depth) == (checkpoint.parent_turn_id, 1)
    assert found.checkpoint.context_snapshot == {"k": "v"}
    assert server.state.counts["http"] == 0
    assert sum(server.state.counts.values()) <= 4  # HELLO, GET_HEAD, GET_LAST(1), GET_BLOB


def test_our_bundle_projects_every_record_in_the_typed_view(
    store: CxdbSessionStore, server: FakeCxdbServer
) -> None:
    assert api.publish_types(store) is True
    info = store.create_session(META)
    for record in RECORDS:
        api.append_record(store, info.session_id, record)
    page = requests.get(f"{server.url}/v1/contexts/{info.session_id}/turns", params={"limit": 100}, timeout=5)
    assert page.status_code == 200
    turns = page.json()["turns"]
    assert [t["declared_type"]["type_id"] for t in turns] == [spec_for_record(r).type_id for r in RECORDS]
    assert all(t["data"] for t in turns)
    lifecycle = turns[0]["data"]
    assert (lifecycle["event"], lifecycle["status"], lifecycle["pipeline_name"]) == (
        "completed",
        "success",
        "pr-review",
    )
    agent = next(t["data"] for t in turns if t["declared_type"]["type_id"] == "dev.orchestra.AgentTurn")
    assert agent["git_sha"] == "e4f5a6b7" and agent["token_usage"] == {
        "prompt_tokens": "4200",
        "completion_tokens": "1800",
        "cache_read_tokens": "0",
        "cache_write_tokens": "0",
    }
    assert agent["tool_calls"][0]["name"] == "backend:read-file"
    assert (
        requests.put(f"{server.url}/v1/registry/bundles/x", data=bundle_bytes(), timeout=5).status_code == 204
    )


def test_ids_may_come_back_as_numbers() -> None:
    item = {
        "turn_id": 12,
        "parent_turn_id": 0,
        "depth": 0,
        "declared_type": {"type_id": "t.E", "type_version": 1},
        "content_hash_b3": "00" * 32,
        "bytes_b64": "gQEB",  # {1: 1}
    }
    facts = facts_from_http(item, "test")
    assert (facts.turn_id, facts.parent_turn_id, dict(facts.data)) == (12, 0, {1: 1})


def test_an_unreachable_server_fails_fast_naming_the_address() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    started = time.monotonic()
    with pytest.raises(StoreUnavailableError, match=f"127.0.0.1:{port}"):
        CxdbSessionStore(f"127.0.0.1:{port}", f"http://127.0.0.1:{port}").create_session(META)
    assert time.monotonic() - started < 2.5


def test_an_unreachable_http_port_fails_fast_naming_the_url(server: FakeCxdbServer) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    store = CxdbSessionStore(server.addr, f"http://127.0.0.1:{port}")
    info = store.create_session(META)
    with pytest.raises(StoreUnavailableError, match=f"http://127.0.0.1:{port}"):
        store.turns(info.session_id)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("cxdb:9009", ("cxdb", 9009)), ("10.0.0.2", ("10.0.0.2", 9009)), ("[::1]:19009", ("::1", 19009))],
)
def test_addresses_parse(text: str, expected: tuple[str, int]) -> None:
    assert parse_address(text) == expected


@pytest.mark.parametrize("text", ["", "host:port", "host:0", "a:b:c"])
def test_bad_addresses_are_refused(text: str) -> None:
    with pytest.raises(StoreUnavailableError):
        parse_address(text)


def test_a_forward_range_far_from_the_head_reads_the_payloads_of_its_turns_alone(
    server: FakeCxdbServer, store: CxdbSessionStore
) -> None:
    session = store.create_session(META).session_id
    ids = [store.append(session, "t.Step", 1, {1: n}).turn_id for n in range(600)]
    server.state.counts.clear()
    found = store.turns_after(session, after_turn_id=ids[20], limit=5)
    assert [turn.turn_id for turn in found.turns] == ids[21:26] and found.has_more
    assert [turn.data[1] for turn in found.turns] == [21, 22, 23, 24, 25]
    # One page from the head (limit + 1 payloads), the ids walked back without payloads, the range's 5 payloads.
    assert server.state.counts["payloads"] == 6 + 5
    assert server.state.counts["http"] <= 3
    server.state.counts.clear()
    tail = store.turns_after(session, after_turn_id=ids[-3], limit=5)
    assert [turn.turn_id for turn in tail.turns] == ids[-2:] and not tail.has_more
    assert (server.state.counts["http"], server.state.counts["payloads"]) == (1, 6)
