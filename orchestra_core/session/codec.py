"""Turn records to tagged plain data and back, by the catalog's field tags (no wire format here)."""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from typing import Any

from attrs import frozen

from orchestra_core.model.store_errors import TurnDataError
from orchestra_core.ports.session_store import StoredTurn
from orchestra_core.session.catalog import spec_for_record, spec_for_type
from orchestra_core.session.schema import (
    ARRAY,
    BOOL,
    F64,
    MAP,
    REF,
    RESERVED_TAGS,
    STRING,
    U8,
    U32,
    U64,
    FieldSpec,
    TypeSpec,
)

_INT_MIN = -(2**63)
_INT_MAX = 2**64 - 1
_UNSIGNED = frozenset({U8, U32, U64})


class PlainTurnData(dict):  # type: ignore[type-arg]
    """Tagged turn data the codec built and checked itself, so a store need not copy and check it again."""


@frozen
class EncodedTurn:
    """A record ready for `SessionStore.append`."""

    type_id: str
    type_version: int
    data: dict[int, Any]


def encode_record(record: object) -> EncodedTurn:
    """Encode a turn record (PipelineLifecycle, AgentTurn, Checkpoint, ...) by its field tags.

    Raises:
        TypeError: Not a turn record.
        TurnDataError: A field holds a value its kind cannot store.
    """
    spec = spec_for_record(record)
    return EncodedTurn(spec.type_id, spec.version, PlainTurnData(_encode(spec, record)))


def decode_record(turn: StoredTurn, *, skip_tags: frozenset[int] = frozenset()) -> object | None:
    """The record a stored turn holds; None for types Orchestra does not define.

    Older versions decode too (their missing fields take the record's defaults); unknown tags of newer
    versions are ignored, and so are the tags in `skip_tags` (those fields take their defaults).

    Raises:
        TurnDataError: The data does not fit the declared type.
    """
    spec = spec_for_type(turn.type_id)
    if spec is None:
        return None
    return _decode(spec, turn.data, f"turn {turn.turn_id} ({turn.type_id} v{turn.type_version})", skip_tags)


def normalize_turn_data(data: Mapping[int, Any]) -> dict[int, Any]:
    """A deep plain copy of turn data, checked: integer non-reserved tags, storable values only.

    Raises:
        TurnDataError: A tag or value cannot be stored; the message names where.
    """
    if type(data) is PlainTurnData:
        return data
    if not isinstance(data, Mapping):
        raise TurnDataError(f"turn data must be a map of field tags, not {type(data).__name__}")
    normalized: dict[int, Any] = {}
    for tag, value in data.items():
        if isinstance(tag, bool) or not isinstance(tag, int) or not 0 <= tag < 2**32:
            raise TurnDataError(f"turn data key {tag!r} is not a field tag (an integer 0..2**32-1)")
        if tag in RESERVED_TAGS:
            raise TurnDataError(f"turn data uses tag {tag}, which is reserved for the store")
        normalized[tag] = plain_value(value, f"tag {tag}")
    return normalized


def plain_value(value: Any, where: str) -> Any:
    """A deep copy of a storable value (tuples become lists, mappings dicts).

    Raises:
        TurnDataError: Something in it is not None, bool, int, float, str, bytes, list or map.
    """
    if value is None or isinstance(value, bool | str | float):
        return value
    if isinstance(value, int):
        if not _INT_MIN <= value <= _INT_MAX:
            raise TurnDataError(f"{where}: integer {value} does not fit in 64 bits")
        return value
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value)
    if isinstance(value, list | tuple):
        return [plain_value(item, f"{where}[{index}]") for index, item in enumerate(value)]
    if isinstance(value, Mapping):
        result = {}
        for key, item in value.items():
            if isinstance(key, bool) or not isinstance(key, str | int):
                raise TurnDataError(f"{where}: map key {key!r} is not a string or an integer")
            result[key] = plain_value(item, f"{where}.{key}")
        return result
    raise TurnDataError(f"{where}: a {type(value).__name__} cannot be stored (use plain data)")


def _encode(spec: TypeSpec, record: object, where: str = "") -> dict[int, Any]:
    """`where` names the record inside an outer one ("" for a turn's own record); errors add the field."""
    data: dict[int, Any] = {}
    for field_spec in spec.fields:
        value = getattr(record, field_spec.name)
        if value is None:
            continue
        # The common cases first, exactly (a record's strings, flags and counts): nothing to convert or copy.
        value_type, kind = type(value), field_spec.kind
        if field_spec.enum is None and (
            (value_type is str and kind == STRING)
            or (value_type is bool and kind == BOOL)
            or (value_type is int and kind in _UNSIGNED and 0 <= value <= _INT_MAX)
        ):
            data[field_spec.tag] = value
        else:
            data[field_spec.tag] = _encode_value(field_spec, value, f"{where or spec.type_id}.{field_spec.name}")
    return data


def _encode_value(spec: FieldSpec, value: Any, where: str) -> Any:
    if spec.enum is not None:
        number = spec.enum.numbers.get(value) if isinstance(value, Enum) else None
        if number is not None:
            return number
        member_type = type(next(iter(spec.enum.numbers)))
        try:
            return spec.enum.number(member_type(value))
        except (ValueError, KeyError):
            raise TurnDataError(f"{where}: {value!r} is not one of {spec.enum.enum_id}") from None
    if spec.kind == REF:
        assert spec.ref is not None
        return _encode(spec.ref, value, where)
    if spec.kind == ARRAY:
        if spec.ref is not None:
            return [_encode(spec.ref, item, f"{where}[]") for item in value]
        return [_encode_scalar(spec.items or "", item, f"{where}[]") for item in value]
    if spec.kind == MAP and spec.ref is not None:
        return {_map_key(key, where): _encode(spec.ref, item, f"{where}.{key}") for key, item in value.items()}
    return _encode_scalar(spec.kind, value, where)


def _map_key(key: Any, where: str) -> str:
    if not isinstance(key, str):
        raise TurnDataError(f"{where}: map key {key!r} is not a string")
    return key


def _encode_scalar(kind: str, value: Any, where: str) -> Any:
    # The common cases first, exactly (a record's strings, flags and counts): nothing to convert or copy.
    value_type = type(value)
    if (value_type is str and kind == STRING) or (value_type is bool and kind == BOOL):
        return value
    if value_type is int and kind in _UNSIGNED and 0 <= value <= _INT_MAX:
        return value
    if kind == F64 and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if not _fits(kind, value):
        raise TurnDataError(f"{where}: {type(value).__name__} {value!r} is not a {kind}")
    return plain_value(value, where)


def _fits(kind: str, value: Any) -> bool:
    if kind == STRING:
        return isinstance(value, str)
    if kind == BOOL:
        return isinstance(value, bool)
    if kind == F64:
        return isinstance(value, float)
    if kind == MAP:
        return isinstance(value, Mapping)
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0  # u8/u32/u64


def _decode(spec: TypeSpec, data: Mapping[Any, Any], where: str, skip_tags: frozenset[int] = frozenset()) -> object:
    if type(data) is not dict and not isinstance(data, Mapping):
        raise TurnDataError(f"{where}: expected a map of field tags, got {type(data).__name__}")
    kwargs = {}
    for field_spec in spec.fields:
        if field_spec.tag in data and field_spec.tag not in skip_tags:
            # `where` names the field only once something is wrong: building it for every field of every
            # turn cost more than the decoding itself on long histories.
            kwargs[field_spec.name] = _decode_value(field_spec, data[field_spec.tag], where)
    try:
        return spec.make(kwargs)
    except (TypeError, ValueError) as error:
        raise TurnDataError(f"{where}: {error}") from None


def _decode_value(spec: FieldSpec, value: Any, record_where: str) -> Any:
    """A field's value; `record_where` names the record holding it (errors add the field's name)."""
    kind = spec.kind
    if spec.enum is None:
        # The common cases first, exactly (a record's strings, flags, counts and times): nothing to convert.
        value_type = type(value)
        if (
            (value_type is str and kind == STRING)
            or (value_type is bool and kind == BOOL)
            or (value_type is float and kind == F64)
            or (value_type is int and kind in _UNSIGNED and value >= 0)
        ):
            return value
    where = f"{record_where}.{spec.name}"
    if spec.enum is not None:
        try:
            return spec.enum.member(value)
        except KeyError:
            raise TurnDataError(f"{where}: {value!r} is not a number of {spec.enum.enum_id}") from None
    if kind == REF:
        assert spec.ref is not None
        return _decode(spec.ref, value, where)
    if kind == ARRAY:
        if not isinstance(value, list | tuple):
            raise TurnDataError(f"{where}: expected an array, got {type(value).__name__}")
        if spec.ref is not None:
            return tuple(_decode(spec.ref, item, f"{where}[]") for item in value)
        return tuple(_decode_scalar(spec.items or "", item, f"{where}[]") for item in value)
    if kind == MAP and spec.ref is not None:
        if type(value) is not dict and not isinstance(value, Mapping):
            raise TurnDataError(f"{where}: expected a map, got {type(value).__name__}")
        return {key: _decode(spec.ref, item, f"{where}.{key}") for key, item in value.items()}
    return _decode_scalar(kind, value, where)


def _decode_scalar(kind: str, value: Any, where: str) -> Any:
    value_type = type(value)
    if value_type is str and kind == STRING:
        return value
    if kind == F64 and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if not _fits(kind, value):
        raise TurnDataError(f"{where}: stored {type(value).__name__} {value!r} is not a {kind}")
    return value
