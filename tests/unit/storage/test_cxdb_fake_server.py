"""The fake CXDB server behaves as PROTOCOL.md sections 1-4 say, quirks included (raw sockets and HTTP)."""

from __future__ import annotations

import json
import socket
import struct
from collections.abc import Iterator
from pathlib import Path

import msgpack
import pytest
import requests

from orchestra_adapters.storage.cxdb import protocol
from orchestra_core.session.bundle import bundle_bytes
from tests.support.cxdb_server import FakeCxdbServer

FIXTURES = Path(__file__).parent / "cxdb_fixtures"


class Client:
    """A bare binary client: frames in, (msg_type, payload) out, None on EOF."""

    def __init__(self, addr: str) -> None:
        host, port = addr.split(":")
        self.socket = socket.create_connection((host, int(port)), timeout=5)
        self.next_id = 0

    def send(self, request: protocol.Request) -> tuple[int, bytes] | None:
        self.next_id += 1
        self.socket.sendall(protocol.frame(request, self.next_id))
        header = self._read(16)
        if header is None:
            return None
        length, msg_type, flags, req_id = protocol.HEADER.unpack(header)
        assert (flags, req_id) == (0, self.next_id)
        return msg_type, self._read(length) or b""

    def ok(self, request: protocol.Request) -> bytes:
        answer = self.send(request)
        assert answer is not None and answer[0] == request.msg_type
        return answer[1]

    def _read(self, size: int) -> bytes | None:
        data = b""
        while len(data) < size:
            chunk = self.socket.recv(size - len(data))
            if not chunk:
                return None
            data += chunk
        return data


@pytest.fixture
def server() -> Iterator[FakeCxdbServer]:
    with FakeCxdbServer() as fake:
        yield fake


@pytest.fixture
def client(server: FakeCxdbServer) -> Client:
    client = Client(server.addr)
    client.ok(protocol.hello("fixture-client"))
    return client


def _append(
    client: Client, context: int, payload: bytes, *, parent: int = 0, type_id: str = "t.T"
) -> protocol.Appended:
    return protocol.decode_appended(client.ok(protocol.append_turn(context, parent, type_id, 1, payload)))


def _create(client: Client, base: int = 0) -> int:
    return protocol.decode_head(client.ok(protocol.ctx_create(base))).context_id


def test_hello_answers_session_id_and_version(server: FakeCxdbServer) -> None:
    client = Client(server.addr)
    session_id, version = protocol.decode_hello(client.ok(protocol.hello("")))
    assert session_id >= 1 and version == 1


def test_first_turn_has_depth_zero_and_children_count_up(client: Client) -> None:
    context = _create(client)
    assert protocol.decode_head(client.ok(protocol.get_head(context))) == protocol.Head(context, 0, 0)
    first = _append(client, context, b"\x81\x01\x01")
    second = _append(client, context, b"\x81\x01\x02")
    assert (first.depth, second.depth) == (0, 1)
    assert protocol.decode_head(client.ok(protocol.get_head(context))) == protocol.Head(
        context, second.turn_id, 1
    )


def test_handler_errors_drop_the_connection_without_an_error_frame(
    client: Client, server: FakeCxdbServer
) -> None:
    assert client.send(protocol.get_head(999)) is None
    fresh = Client(server.addr)
    assert fresh.send(protocol.get_blob(b"\x00" * 32)) is None


def test_only_unknown_message_types_get_an_error_frame(client: Client) -> None:
    answer = client.send(protocol.Request(7, struct.pack("<QQI", 1, 1, 1)))  # type: ignore[arg-type]
    assert answer is not None and answer[0] == 255
    assert protocol.decode_error(answer[1]) == (422, "unknown msg_type")


def test_idempotency_key_is_ignored(client: Client) -> None:
    context = _create(client)
    request = protocol.append_turn(context, 0, "t.T", 1, b"\x81\x01\x01", idempotency_key=b"same")
    first = protocol.decode_appended(client.ok(request))
    second = protocol.decode_appended(client.ok(request))
    assert second.turn_id == first.turn_id + 1


def test_bad_hash_and_compressed_payloads(client: Client, server: FakeCxdbServer) -> None:
    context = _create(client)
    request = protocol.append_turn(context, 0, "t.T", 1, b"\x81\x01" + b"\xa3abc" * 0 + b"\x01")
    tampered = protocol.Request(request.msg_type, request.payload.replace(b"\x81\x01\x01", b"\x81\x01\x02"))
    assert client.send(tampered) is None
    client = Client(server.addr)
    big = msgpack.packb({1: "x" * 10_000})
    appended = protocol.decode_appended(
        client.ok(protocol.append_turn(context, 0, "t.T", 1, big, compress_from=100))
    )
    records = protocol.decode_turns(client.ok(protocol.get_last(context, 1, include_payload=False)), False)
    assert records[0].compression == 1 and records[0].uncompressed_len == len(big)
    with_payload = protocol.decode_turns(client.ok(protocol.get_last(context, 1, include_payload=True)), True)
    assert (with_payload[0].compression, with_payload[0].payload) == (0, big)
    assert appended.content_hash == records[0].content_hash


def test_explicit_parent_may_come_from_another_context(client: Client) -> None:
    one, two = _create(client), _create(client)
    foreign = _append(client, one, b"\x81\x01\x01")
    _append(client, two, b"\x81\x01\x02")
    hung = _append(client, two, b"\x81\x01\x03", parent=foreign.turn_id)
    assert hung.depth == 1
    assert protocol.decode_head(client.ok(protocol.get_head(two))).head_turn_id == hung.turn_id


def test_fork_is_a_head_pointer_and_unknown_bases_drop(client: Client, server: FakeCxdbServer) -> None:
    context = _create(client)
    turns = [_append(client, context, bytes([0x81, 0x01, n])) for n in range(3)]
    fork = protocol.decode_head(client.ok(protocol.ctx_fork(turns[1].turn_id)))
    assert (fork.head_turn_id, fork.head_depth) == (turns[1].turn_id, 1)
    assert client.send(protocol.ctx_fork(999)) is None


def test_put_blob_checks_the_hash_and_reports_new_or_existing(client: Client, server: FakeCxdbServer) -> None:
    digest, was_new = protocol.decode_put_blob(client.ok(protocol.put_blob(b"hello blob")))
    assert digest.hex().startswith("0c82c44e") and was_new
    assert protocol.decode_put_blob(client.ok(protocol.put_blob(b"hello blob")))[1] is False
    assert protocol.decode_blob(client.ok(protocol.get_blob(digest))) == b"hello blob"
    bad = protocol.Request(protocol.MsgType.PUT_BLOB, b"\x00" * 32 + struct.pack("<I", 1) + b"x")
    assert client.send(bad) is None


def test_http_is_get_only_with_route_404(server: FakeCxdbServer) -> None:
    for method, path in [
        ("POST", "/v1/contexts/create"),
        ("POST", "/v1/contexts/1/append"),
        ("GET", "/health"),
    ]:
        response = requests.request(method, server.url + path, json={}, timeout=5)
        assert response.status_code == 404
        assert response.json() == {"error": {"code": 404, "message": "route"}}
    assert requests.get(server.url + "/healthz", timeout=5).text == "ok"


def test_turn_pages_use_string_ids_and_end_with_an_empty_page(client: Client, server: FakeCxdbServer) -> None:
    context = _create(client)
    ids = [_append(client, context, bytes([0x81, 0x01, n])).turn_id for n in range(3)]
    url = f"{server.url}/v1/contexts/{context}/turns"
    page = requests.get(url, params={"view": "raw", "limit": 2}, timeout=5).json()
    assert [t["turn_id"] for t in page["turns"]] == [str(ids[1]), str(ids[2])]
    assert page["meta"]["head_turn_id"] == str(ids[2]) and page["next_before_turn_id"] == str(ids[1])
    last = requests.get(url, params={"view": "raw", "before_turn_id": ids[1]}, timeout=5).json()
    assert [t["turn_id"] for t in last["turns"]] == [str(ids[0])] and last["next_before_turn_id"] == str(
        ids[0]
    )
    empty = requests.get(url, params={"view": "raw", "before_turn_id": ids[0]}, timeout=5).json()
    assert (empty["turns"], empty["next_before_turn_id"]) == ([], None)
    assert requests.get(f"{server.url}/v1/contexts/999/turns", timeout=5).status_code == 404


def test_typed_view_needs_a_registered_type(client: Client, server: FakeCxdbServer) -> None:
    context = _create(client)
    _append(client, context, msgpack.packb({1: 1, 2: "INFO"}), type_id="dev.orchestra.PipelineLifecycle")
    url = f"{server.url}/v1/contexts/{context}/turns"
    assert requests.get(url, timeout=5).status_code == 424
    assert requests.get(url, params={"view": "raw"}, timeout=5).status_code == 200
    assert (
        requests.put(f"{server.url}/v1/registry/bundles/x", data=bundle_bytes(), timeout=5).status_code == 201
    )
    typed = requests.get(url, timeout=5).json()["turns"][0]
    assert typed["data"] == {"event": "completed", "pipeline_name": "INFO"}


def test_bundle_put_rules(server: FakeCxdbServer) -> None:
    url = f"{server.url}/v1/registry/bundles/ignored"
    logentry = (FIXTURES / "bundle_logentry.json").read_bytes()
    assert requests.put(url, data=logentry, timeout=5).status_code == 201
    assert requests.put(url, data=logentry, timeout=5).status_code == 204
    stored = requests.get(f"{server.url}/v1/registry/bundles/com.example.logs-v1", timeout=5)
    assert stored.content == logentry and stored.headers["ETag"]
    assert requests.put(url, data=logentry.replace(b"\n", b"\r\n"), timeout=5).status_code == 422
    document = json.loads(logentry)

    def variant(bundle_id: str, change: object) -> int:
        copy = json.loads(json.dumps(document))
        copy["bundle_id"] = bundle_id
        change(copy)  # type: ignore[operator]
        return requests.put(url, data=json.dumps(copy), timeout=5).status_code

    fields = lambda d: d["types"]["com.example.LogEntry"]["versions"]  # noqa: E731
    assert variant("v1-changed", lambda d: fields(d)["1"]["fields"]["3"].update(type="u32")) == 422
    assert (
        variant("v2-reuse", lambda d: fields(d).update({"2": {"fields": {"3": {"name": "m", "type": "u8"}}}}))
        == 422
    )
    assert (
        variant(
            "v2-ok", lambda d: fields(d).update({"2": {"fields": {"5": {"name": "x", "type": "string"}}}})
        )
        == 201
    )
    assert requests.get(
        f"{server.url}/v1/registry/types/com.example.LogEntry/versions/2", timeout=5
    ).json() == {"fields": {"5": {"name": "x", "type": "string"}}}
    missing_enum = {"3": {"fields": {"9": {"name": "lvl", "type": "u8", "enum": "com.example.Missing"}}}}
    assert variant("enum-gone", lambda d: fields(d).update(missing_enum)) == 422


def test_metadata_comes_from_integer_key_30_of_the_first_turn(client: Client, server: FakeCxdbServer) -> None:
    tagged = _create(client)
    _append(client, tagged, msgpack.packb({1: "x", 30: {1: "my-tag", 2: "Title", 3: ["a"], 10: {40: "svc"}}}))
    item = (FIXTURES / "msgpack_conversation_item.json").read_text()
    string_keys = _create(client)
    _append(client, string_keys, bytes.fromhex(json.loads(item)["payload_hex"]))
    listed = {
        c["context_id"]: c for c in requests.get(f"{server.url}/v1/contexts", timeout=5).json()["contexts"]
    }
    assert listed[str(tagged)]["client_tag"] == "my-tag"
    assert (
        listed[str(string_keys)]["client_tag"] == "fixture-client"
    )  # the HELLO tag: string keys are ignored
    provenance = requests.get(f"{server.url}/v1/contexts/{tagged}/provenance", timeout=5).json()
    assert provenance == {"context_id": str(tagged), "provenance": {"40": "svc"}}
