"""The fake CXDB server's type registry: bundle ingest rules (PROTOCOL.md 3.2) and typed projection (3.3)."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime
from typing import Any


class RegistryError(Exception):
    """A 422 from bundle ingest (CXDB never answers 409 here)."""


class MissingDescriptor(Exception):
    """A type/version with no descriptor: 424 `type descriptor` for the whole typed page."""


_FIELD_KEYS = ("name", "type", "enum", "ref", "items", "optional")
_NUMBER_TYPES = ("u32", "uint32", "u8", "uint8", "int32")
_U64_TYPES = ("u64", "uint64", "int64")
_TIME_TYPES = ("unix_ms", "time_ms", "timestamp_ms")


class Registry:
    """Bundles by id (raw bytes), merged type descriptors and enums; ingest is not atomic, as upstream."""

    def __init__(self) -> None:
        self.bundles: dict[str, bytes] = {}
        self.types: dict[str, dict[int, dict[int, dict[str, Any]]]] = {}
        self.renderers: dict[tuple[str, int], dict[str, Any]] = {}  # the first one a type version got stays
        self.enums: dict[str, dict[str, str]] = {}
        self.last_bundle_id: str | None = None

    def ingest(self, body: bytes) -> bool:
        """Store a bundle; True if new (201), False if byte-identical to a stored one (204).

        Raises:
            RegistryError: Any rule of PROTOCOL.md 3.2 is broken.
        """
        try:
            document = json.loads(body)
        except ValueError as error:
            raise RegistryError(f"invalid json: {error}") from None
        if not isinstance(document, dict):
            raise RegistryError("bundle must be an object")
        version, bundle_id = document.get("registry_version"), document.get("bundle_id")
        if not isinstance(version, int) or isinstance(version, bool) or version <= 0:
            raise RegistryError("registry_version must be a positive integer")
        if not isinstance(bundle_id, str):
            raise RegistryError("bundle_id must be a string")
        if bundle_id in self.bundles:
            if self.bundles[bundle_id] == body:
                return False
            raise RegistryError("bundle_id already exists with different content")
        self._merge_enums(document.get("enums", {}))
        self._merge_types(document.get("types", {}))
        self._check_enum_references()
        self.bundles[bundle_id] = body
        self.last_bundle_id = bundle_id
        return True

    def descriptor(self, type_id: str, version: int) -> dict[int, dict[str, Any]]:
        try:
            return self.types[type_id][version]
        except KeyError:
            raise MissingDescriptor(type_id) from None

    def renderer_manifest(self) -> dict[str, dict[str, Any]]:
        """`GET /v1/registry/renderers`: the renderer of each type's highest version, when that version has one."""
        manifest = {}
        for type_id, versions in self.types.items():
            spec = self.renderers.get((type_id, max(versions)))
            if spec is not None:
                manifest[type_id] = spec
        return manifest

    def latest(self, type_id: str) -> tuple[int, dict[int, dict[str, Any]]]:
        versions = self.types.get(type_id)
        if not versions:
            raise MissingDescriptor(type_id)
        newest = max(versions)
        return newest, versions[newest]

    def _merge_enums(self, enums: Any) -> None:
        if not isinstance(enums, dict):
            raise RegistryError("enums must be an object")
        for enum_id, labels in enums.items():
            if not isinstance(labels, dict):
                raise RegistryError(f"enum {enum_id} must be an object")
            mapping = {str(int(number)): str(label) for number, label in labels.items()}
            if enum_id in self.enums and self.enums[enum_id] != mapping:
                raise RegistryError(f"enum {enum_id} differs from existing")
            self.enums[enum_id] = mapping

    def _merge_types(self, types: Any) -> None:
        if not isinstance(types, dict):
            raise RegistryError("types must be an object")
        for type_id, entry in types.items():
            versions = entry.get("versions", {}) if isinstance(entry, dict) else None
            if not isinstance(versions, dict):
                raise RegistryError(f"type {type_id}: versions must be an object")
            for version_text, definition in versions.items():
                version = _integer(version_text, f"type {type_id}: version")
                fields = _fields(type_id, definition)
                renderer = _renderer(type_id, definition)
                known = self.types.setdefault(type_id, {})
                if version in known and known[version] != fields:
                    raise RegistryError(f"type {type_id} version {version} differs from existing")
                self._check_tag_reuse(type_id, fields)
                known[version] = fields
                if renderer is not None:
                    self.renderers.setdefault((type_id, version), renderer)

    def _check_tag_reuse(self, type_id: str, fields: dict[int, dict[str, Any]]) -> None:
        for other in self.types.get(type_id, {}).values():
            for tag, field in fields.items():
                if tag in other and (other[tag]["type"], other[tag].get("enum")) != (
                    field["type"],
                    field.get("enum"),
                ):
                    raise RegistryError(f"type {type_id}: tag reuse conflict on tag {tag}")

    def _check_enum_references(self) -> None:
        for type_id, versions in self.types.items():
            for fields in versions.values():
                for field in fields.values():
                    if field.get("enum") and field["enum"] not in self.enums:
                        raise RegistryError(f"missing enum {field['enum']} for type {type_id}")


def _integer(text: Any, what: str) -> int:
    try:
        value = int(str(text))
    except ValueError:
        raise RegistryError(f"{what} {text!r} is not an integer") from None
    if value < 0:
        raise RegistryError(f"{what} {text!r} is negative")
    return value


def _renderer(type_id: str, definition: Any) -> dict[str, Any] | None:
    """A version's `renderer` (`esm_url`, and `component`, `integrity` when given), None without one."""
    renderer = definition.get("renderer") if isinstance(definition, dict) else None
    if renderer is None:
        return None
    if not isinstance(renderer, dict) or not isinstance(renderer.get("esm_url"), str):
        raise RegistryError(f"type {type_id}: renderer needs an esm_url string")
    return {key: renderer[key] for key in ("esm_url", "component", "integrity") if key in renderer}


def _fields(type_id: str, definition: Any) -> dict[int, dict[str, Any]]:
    raw = definition.get("fields", {}) if isinstance(definition, dict) else None
    if not isinstance(raw, dict):
        raise RegistryError(f"type {type_id}: fields must be an object")
    fields = {}
    for tag_text, field in raw.items():
        tag = _integer(tag_text, f"type {type_id}: tag")
        if not isinstance(field, dict) or "name" not in field or "type" not in field:
            raise RegistryError(f"type {type_id}: field {tag} needs name and type")
        fields[tag] = {key: field[key] for key in _FIELD_KEYS if key in field}
    return fields


def project(
    registry: Registry, fields: dict[int, dict[str, Any]], payload: dict[Any, Any], include_unknown: bool
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """`data` (by field name) and `unknown` (by decimal tag, only when asked) of a msgpack map."""
    tagged = {}
    for key, value in payload.items():
        if isinstance(key, int) and not isinstance(key, bool) and key >= 0:
            tagged[key] = value
        elif isinstance(key, str) and key.isdigit():
            tagged[int(key)] = value
    data = {
        fields[tag]["name"]: _render(registry, fields[tag], value)
        for tag, value in tagged.items()
        if tag in fields
    }
    unknown = {str(tag): _generic(value) for tag, value in tagged.items() if tag not in fields}
    return data, unknown if include_unknown else None


def _render(registry: Registry, field: dict[str, Any], value: Any) -> Any:
    kind = field["type"]
    is_int = isinstance(value, int) and not isinstance(value, bool)
    if field.get("enum") and is_int:
        return registry.enums.get(field["enum"], {}).get(str(value), value)
    if kind in _U64_TYPES:
        return str(value) if is_int and value >= 0 else None
    if kind in _NUMBER_TYPES:
        return value if is_int else None
    if kind == "string":
        return value if isinstance(value, str) else None
    if kind == "bool":
        return value if isinstance(value, bool) else None
    if kind in ("bytes", "typed_blob"):
        return base64.b64encode(value).decode() if isinstance(value, bytes) else None
    if kind in _TIME_TYPES:
        return (
            datetime.fromtimestamp(value / 1000, UTC).isoformat().replace("+00:00", "Z") if is_int else None
        )
    if kind == "array":
        if not isinstance(value, list):
            return None
        items = field.get("items")
        item_field = dict(items) if isinstance(items, dict) else {"type": items or "any"}
        return [_render(registry, item_field, item) for item in value]
    if kind == "ref":
        if not isinstance(value, dict):
            return None
        _version, nested = registry.latest(field["ref"])
        return project(registry, nested, value, include_unknown=False)[0]
    return _generic(value)


def _generic(value: Any) -> Any:
    if isinstance(value, bool) or value is None or isinstance(value, float | str):
        return value
    if isinstance(value, int):
        return str(value) if value >= 0 else value
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    if isinstance(value, list):
        return [_generic(item) for item in value]
    if isinstance(value, dict):
        return {str(key): _generic(item) for key, item in value.items()}
    return None
