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
    RENDERERS_ID_PREFIX,
    bundle_bytes,
    bundle_document,
    bundle_id,
    bundle_with_renderers,
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


RENDERERS = {
    "dev.orchestra.AgentTurn": {"esm_url": "http://127.0.0.1:8765/cxdb/renderers/agent-turn.js", "component": "default"},
    "dev.orchestra.Checkpoint": {"esm_url": "http://127.0.0.1:8765/cxdb/renderers/checkpoint.js"},
}


def test_the_renderer_bundle_names_a_renderer_on_every_version_of_its_types() -> None:
    document = json.loads(bundle_with_renderers(RENDERERS))
    assert document["bundle_id"].startswith(RENDERERS_ID_PREFIX)
    plain = bundle_document()
    for type_id, versions in document["types"].items():
        for number, version in versions["versions"].items():
            assert version["fields"] == plain["types"][type_id]["versions"][number]["fields"]
            assert version.get("renderer") == RENDERERS.get(type_id)
    assert bundle_with_renderers(RENDERERS) == bundle_with_renderers(dict(reversed(RENDERERS.items())))
    moved = {type_id: {**spec, "esm_url": spec["esm_url"].replace("8765", "9000")} for type_id, spec in RENDERERS.items()}
    assert json.loads(bundle_with_renderers(moved))["bundle_id"] != document["bundle_id"]


def test_cxdb_adds_renderers_to_known_types_and_keeps_the_first() -> None:
    registry = Registry()
    assert registry.ingest(bundle_bytes()) is True
    assert registry.renderer_manifest() == {}
    assert registry.ingest(bundle_with_renderers(RENDERERS)) is True  # same fields: the renderers are added
    assert registry.ingest(bundle_with_renderers(RENDERERS)) is False  # byte-identical: 204
    assert registry.renderer_manifest() == RENDERERS
    moved = {type_id: {**spec, "esm_url": "http://elsewhere/x.js"} for type_id, spec in RENDERERS.items()}
    assert registry.ingest(bundle_with_renderers(moved)) is True
    assert registry.renderer_manifest() == RENDERERS  # as upstream: a version keeps its first renderer
    fresh = Registry()
    assert fresh.ingest(bundle_with_renderers(RENDERERS)) and fresh.ingest(bundle_bytes())  # either order
    assert fresh.renderer_manifest() == RENDERERS


@pytest.mark.parametrize(
    ("renderers", "message"),
    [
        ({"dev.orchestra.Nope": {"esm_url": "http://x/a.js"}}, "not an Orchestra turn type"),
        ({"dev.orchestra.AgentTurn": {"component": "default"}}, "needs an esm_url"),
    ],
)
def test_renderers_of_unknown_types_or_without_a_url_are_refused(renderers: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        bundle_with_renderers(renderers)
