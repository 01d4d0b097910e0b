"""Byte-exact request encoding against CXDB's conformance fixtures (PROTOCOL.md section 5).

The fixtures in `cxdb_fixtures/` are the upstream ones (strongdm/cxdb `clients/rust/tests/fixtures`,
produced by `clients/go/cmd/cxdb-fixtures`): request payloads only, no headers.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestra_adapters.storage.cxdb import protocol
from orchestra_adapters.storage.payload import decode_payload, tag_keys
from orchestra_core.session.bundle import parse_bundle_id

FIXTURES = Path(__file__).parent / "cxdb_fixtures"
ITEM = "cxdb.ConversationItem"

REQUESTS = {
    "hello_empty": protocol.hello(""),
    "hello_tag": protocol.hello("test-client"),
    "ctx_create_base0": protocol.ctx_create(0),
    "ctx_fork_base123": protocol.ctx_fork(123),
    "get_head_ctx42": protocol.get_head(42),
    "append_parent0": protocol.append_turn(1, 0, ITEM, 3, b"\x91\x01"),
    "append_parent7": protocol.append_turn(1, 7, ITEM, 3, b"\x91\x02"),
    "append_idempotent": protocol.append_turn(1, 0, ITEM, 3, b"\x91\x03", idempotency_key=b"idem-1"),
    "append_with_fs": protocol.append_turn(1, 0, ITEM, 3, b"\x91\x04", fs_root_hash=b"\xbb" * 32),
    "get_last_default": protocol.get_last(1, 10, include_payload=False),
    "get_last_payload": protocol.get_last(1, 5, include_payload=True),
    "attach_fs": protocol.attach_fs(99, b"\xaa" * 32),
    "put_blob": protocol.put_blob(b"hello blob"),
}


def _fixture(name: str) -> dict:
    return json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))


def test_every_protocol_fixture_is_covered() -> None:
    protocol_fixtures = {p.stem for p in FIXTURES.glob("*.json") if "msg_type" in _fixture(p.stem)}
    assert protocol_fixtures == set(REQUESTS)


@pytest.mark.parametrize("name", sorted(REQUESTS))
def test_request_matches_fixture_byte_for_byte(name: str) -> None:
    fixture = _fixture(name)
    request = REQUESTS[name]
    assert request.payload.hex() == fixture["payload_hex"]
    assert (int(request.msg_type), request.flags) == (fixture["msg_type"], fixture["flags"])


def test_frame_header_is_little_endian_len_type_flags_req_id() -> None:
    framed = protocol.frame(protocol.get_head(42), req_id=7)
    assert framed[:16] == bytes.fromhex("0800000004000000" + "0700000000000000")
    assert framed[16:] == REQUESTS["get_head_ctx42"].payload


def test_compressed_append_hashes_the_uncompressed_bytes() -> None:
    payload = b"\x81\x01" + b"\xda\x10\x00" + b"x" * 4096
    plain = protocol.append_turn(1, 0, ITEM, 3, payload)
    squeezed = protocol.append_turn(1, 0, ITEM, 3, payload, compress_from=1024)
    assert len(squeezed.payload) < len(plain.payload)
    # type_id, version, encoding, then compression=1, uncompressed_len and the same content hash
    prefix = 8 + 8 + 4 + len(ITEM) + 4 + 4
    assert squeezed.payload[prefix : prefix + 4] == (1).to_bytes(4, "little")
    assert squeezed.payload[prefix + 4 : prefix + 8] == len(payload).to_bytes(4, "little")
    assert squeezed.payload[prefix + 8 : prefix + 40] == plain.payload[prefix + 8 : prefix + 40]


def test_conversation_item_fixture_decodes_with_string_tags() -> None:
    data = tag_keys(decode_payload(bytes.fromhex(_fixture("msgpack_conversation_item")["payload_hex"])))
    assert [data[1], data[2], data[3], data[4]] == ["user_input", "complete", 1700000000000, "item-1"]
    assert data[10] == {"1": "Hello from fixtures", "2": ["file.txt"]}
    assert all(data[key] is None for key in (11, 12, 13, 20, 21, 22))
    assert data[30]["2"] == "Fixture Title" and data[30]["3"] == ["alpha", "beta"]


def test_numeric_map_fixture_decodes_out_of_order_u64_keys() -> None:
    data = decode_payload(bytes.fromhex(_fixture("msgpack_numeric_map")["payload_hex"]))
    assert data == {1: "one", 2: "two", 3: "three"}


def test_logentry_bundle_fixture_is_a_valid_registry_bundle() -> None:
    assert parse_bundle_id((FIXTURES / "bundle_logentry.json").read_bytes()) == "com.example.logs-v1"


def test_responses_decode_and_reject_wrong_sizes() -> None:
    assert protocol.decode_head(bytes.fromhex("2a00000000000000070000000000000003000000")) == protocol.Head(
        42, 7, 3
    )
    assert protocol.decode_hello(bytes.fromhex("05000000000000000100")) == (5, 1)
    assert protocol.decode_put_blob(b"\x01" * 32 + b"\x01") == (b"\x01" * 32, True)
    error = bytes.fromhex("a601000010000000") + b"unknown msg_type"
    assert protocol.decode_error(error) == (422, "unknown msg_type")
    with pytest.raises(protocol.ProtocolError):
        protocol.decode_head(b"\x00" * 19)
    with pytest.raises(protocol.ProtocolError):
        protocol.decode_blob(b"\x05\x00\x00\x00abc")


def test_get_last_layout_with_and_without_payloads() -> None:
    digest = bytes(range(32))
    meta = (
        (11).to_bytes(8, "little")
        + (10).to_bytes(8, "little")
        + (1).to_bytes(4, "little")
        + len(ITEM).to_bytes(4, "little")
        + ITEM.encode()
        + b"".join(n.to_bytes(4, "little") for n in (3, 1, 0, 2))
        + digest
    )
    count = (1).to_bytes(4, "little")
    bare = protocol.decode_turns(count + meta, include_payload=False)
    assert bare[0] == protocol.TurnRecord(11, 10, 1, ITEM, 3, 1, 0, 2, digest, None)
    full = protocol.decode_turns(count + meta + (2).to_bytes(4, "little") + b"\x91\x01", include_payload=True)
    assert full[0].payload == b"\x91\x01"
