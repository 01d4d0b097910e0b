"""The type bundle: CXDB registry format, byte-stable, accepted by CXDB's ingest rules; BLAKE3 in pure Python."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import blake3
import pytest
from hypothesis import given
from hypothesis import strategies as st

from orchestra_core.model.store_errors import BundleConflictError
from orchestra_core.session.bundle import (
    BUNDLE_ID_PREFIX,
    bundle_bytes,
    bundle_document,
    bundle_id,
    parse_bundle_id,
)
from orchestra_core.session.catalog import TURN_TYPES
from orchestra_core.session.content_hash import blake3_hex
from tests.support.cxdb_registry import Registry


def test_bundle_is_registry_json_with_every_version_of_every_type() -> None:
    document = json.loads(bundle_bytes())
    assert document["registry_version"] == 1 and document["bundle_id"] == bundle_id()
    assert bundle_id().startswith(BUNDLE_ID_PREFIX)
    for spec in TURN_TYPES:
        versions = document["types"][spec.type_id]["versions"]
        assert sorted(versions, key=int) == [str(v) for v in range(1, spec.version + 1)]
        latest = versions[str(spec.version)]["fields"]
        assert latest["30"]["name"] == "context_metadata" and latest["31"]["name"] == "session_cursor"
    agent = document["types"]["dev.orchestra.AgentTurn"]["versions"]
    assert "11" not in agent["1"]["fields"] and agent["2"]["fields"]["11"] == {
        "name": "git_sha",
        "type": "string",
        "optional": True,
    }
    assert agent["2"]["fields"]["6"]["items"] == {"type": "ref", "ref": "dev.orchestra.ToolCall"}
    checkpoint = document["types"]["dev.orchestra.Checkpoint"]["versions"]["3"]["fields"]
    assert checkpoint["13"]["ref"] == "dev.orchestra.WorkspaceSnapshot"
    assert document["enums"]["dev.orchestra.StageStatus"]["3"] == "fail"


def test_every_reference_resolves_inside_the_bundle() -> None:
    document = bundle_document()
    for entry in document["types"].values():
        for version in entry["versions"].values():
            for field in version["fields"].values():
                for ref in (
                    field.get("ref"),
                    (field.get("items") or {}).get("ref") if isinstance(field.get("items"), dict) else None,
                ):
                    assert ref is None or ref in document["types"]
                assert field.get("enum") is None or field["enum"] in document["enums"]


def test_bundle_bytes_are_the_same_in_another_process() -> None:
    code = "import sys; from orchestra_core.session.bundle import bundle_bytes; sys.stdout.buffer.write(bundle_bytes())"
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True, env=env).stdout
    assert other == bundle_bytes()
    assert bundle_bytes() == json.dumps(bundle_document(), sort_keys=True, separators=(",", ":")).encode()


def test_cxdb_ingest_rules_accept_the_bundle_and_its_republish() -> None:
    registry = Registry()
    assert registry.ingest(bundle_bytes()) is True
    assert registry.ingest(bundle_bytes()) is False


@pytest.mark.parametrize(
    "body",
    [
        b"not json",
        b"[]",
        b'{"bundle_id":"x"}',
        b'{"registry_version":0,"bundle_id":"x"}',
        b'{"registry_version":1}',
    ],
)
def test_malformed_bundles_are_refused(body: bytes) -> None:
    with pytest.raises(BundleConflictError):
        parse_bundle_id(body)


@given(st.binary(max_size=5000))
def test_pure_python_blake3_matches_the_reference(data: bytes) -> None:
    assert blake3_hex(data) == blake3.blake3(data).hexdigest()


@pytest.mark.parametrize("size", [0, 1, 64, 1023, 1024, 1025, 2048, 3073, 8192, 16385])
def test_pure_python_blake3_at_chunk_and_tree_boundaries(size: int) -> None:
    data = bytes(i % 251 for i in range(size))
    assert blake3_hex(data) == blake3.blake3(data).hexdigest()
