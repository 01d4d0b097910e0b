"""Orchestra's type bundle in CXDB's registry format, serialized byte-stable for idempotent publishing."""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Mapping
from functools import cache
from typing import Any

from orchestra_core.model.store_errors import BundleConflictError
from orchestra_core.session.catalog import ENUMS, NESTED_TYPES, TURN_TYPES
from orchestra_core.session.schema import (
    ARRAY,
    CONTEXT_METADATA_TAG,
    MAP,
    REF,
    SESSION_CURSOR_TAG,
    FieldSpec,
    TypeSpec,
)

REGISTRY_VERSION = 1
BUNDLE_ID_PREFIX = "dev.orchestra.types."
RENDERERS_ID_PREFIX = "dev.orchestra.renderers."


@cache
def bundle_bytes() -> bytes:
    """The bundle as canonical JSON (sorted keys, no spaces): the same bytes on every call and machine.

    CXDB answers 204 to a byte-identical re-publish and 422 to any difference under the same id, so
    the id is derived from the content: changing a type yields a new bundle id.
    """
    return _canonical(bundle_document())


def bundle_id() -> str:
    """The id of the current bundle (`dev.orchestra.types.<12 hex digits of its content hash>`)."""
    bundle_id: str = bundle_document()["bundle_id"]
    return bundle_id


@cache
def _types_and_enums() -> tuple[dict[str, Any], dict[str, Any]]:
    types = {spec.type_id: {"versions": _versions(spec, turn_type=False)} for spec in NESTED_TYPES}
    types.update({spec.type_id: {"versions": _versions(spec, turn_type=True)} for spec in TURN_TYPES})
    enums = {enum.enum_id: enum.labels() for enum in ENUMS}
    return types, enums


def bundle_document() -> dict[str, Any]:
    """The bundle as a dict: `registry_version`, `bundle_id`, `types` -> versions -> fields by tag, `enums`."""
    types, enums = _types_and_enums()
    digest = hashlib.sha256(_canonical({"types": types, "enums": enums})).hexdigest()[:12]
    return {
        "registry_version": REGISTRY_VERSION,
        "bundle_id": BUNDLE_ID_PREFIX + digest,
        "types": types,
        "enums": enums,
    }


def bundle_with_renderers(renderers: Mapping[str, Mapping[str, str]]) -> bytes:
    """The type bundle with a renderer on every version of the named turn types, as canonical JSON.

    CXDB keeps the fields of a type version it already has and adds a renderer to one that has none, so
    this bundle can be published before or after the plain one. Its id (`dev.orchestra.renderers.<hash>`)
    comes from its content, renderer addresses included.

    Args:
        renderers: Turn type id -> renderer spec (`esm_url`, and optionally `component`, `integrity`).

    Raises:
        ValueError: A type id is not one of Orchestra's turn types, or a spec has no `esm_url`.
    """
    types, enums = _types_and_enums()
    with_renderers = copy.deepcopy(types)
    for type_id, spec in renderers.items():
        if type_id not in {turn.type_id for turn in TURN_TYPES}:
            raise ValueError(f"{type_id} is not an Orchestra turn type")
        if not spec.get("esm_url"):
            raise ValueError(f"the renderer of {type_id} needs an esm_url")
        for version in with_renderers[type_id]["versions"].values():
            version["renderer"] = dict(spec)
    digest = hashlib.sha256(_canonical({"types": with_renderers, "enums": enums})).hexdigest()[:12]
    document = {
        "registry_version": REGISTRY_VERSION,
        "bundle_id": RENDERERS_ID_PREFIX + digest,
        "types": with_renderers,
        "enums": enums,
    }
    return _canonical(document)


def _versions(spec: TypeSpec, *, turn_type: bool) -> dict[str, Any]:
    versions = {}
    for version in range(1, spec.version + 1):
        fields = {str(f.tag): _field(spec, f) for f in spec.fields_at(version)}
        if turn_type:
            fields[str(CONTEXT_METADATA_TAG)] = {"name": "context_metadata", "type": MAP, "optional": True}
            fields[str(SESSION_CURSOR_TAG)] = {"name": "session_cursor", "type": MAP, "optional": True}
        versions[str(version)] = {"fields": fields}
    return versions


def _field(spec: TypeSpec, field_spec: FieldSpec) -> dict[str, Any]:
    definition: dict[str, Any] = {"name": field_spec.name, "type": field_spec.kind}
    if field_spec.enum is not None:
        definition["enum"] = field_spec.enum.enum_id
    if field_spec.kind == REF and field_spec.ref is not None:
        definition["ref"] = field_spec.ref.type_id
    if field_spec.kind == ARRAY:
        if field_spec.ref is not None:
            definition["items"] = {"type": REF, "ref": field_spec.ref.type_id}
        else:
            definition["items"] = field_spec.items
    if spec.optional(field_spec):
        definition["optional"] = True
    return definition


def _canonical(document: Any) -> bytes:
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def parse_bundle_id(bundle: bytes) -> str:
    """The `bundle_id` of registry JSON, after the shape checks CXDB makes before storing it.

    Raises:
        BundleConflictError: Not JSON, or no positive `registry_version`, string `bundle_id`, or
            object-valued `types`/`enums`.
    """
    try:
        document = json.loads(bundle)
    except (ValueError, UnicodeDecodeError) as error:
        raise BundleConflictError(f"type bundle is not JSON: {error}") from None
    if not isinstance(document, dict):
        raise BundleConflictError("type bundle is not a JSON object")
    version = document.get("registry_version")
    if isinstance(version, bool) or not isinstance(version, int) or version <= 0:
        raise BundleConflictError("type bundle needs a positive integer registry_version")
    identifier = document.get("bundle_id")
    if not isinstance(identifier, str) or not identifier:
        raise BundleConflictError("type bundle needs a bundle_id string")
    for key in ("types", "enums"):
        if not isinstance(document.get(key, {}), dict):
            raise BundleConflictError(f"type bundle {identifier}: {key} must be an object")
    return identifier
