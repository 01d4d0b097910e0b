"""The shape of a turn type: numeric field tags, wire kinds and enums, as CXDB's registry describes them."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from enum import Enum
from typing import Any

import attrs
from attrs import field, frozen

from orchestra_core.model.immutable import frozen_map

STRING = "string"
BOOL = "bool"
U8 = "u8"
U32 = "u32"
U64 = "u64"
F64 = "f64"
MAP = "map"
ARRAY = "array"
REF = "ref"

SCALAR_KINDS = (STRING, BOOL, U8, U32, U64, F64, MAP)
CONTEXT_METADATA_TAG = 30  # CXDB reads a context's title and labels from key 30 of its first turn
SESSION_CURSOR_TAG = 31  # the stores' per-turn cursor (orchestra_core.session.cursor)
RESERVED_TAGS = (CONTEXT_METADATA_TAG, SESSION_CURSOR_TAG)



def _field_tuple(fields: Sequence[FieldSpec]) -> tuple[FieldSpec, ...]:
    return tuple(fields)


@frozen
class EnumSpec:
    """An enum as stored: fixed numbers for a Python Enum's members (numbers are pinned forever)."""

    enum_id: str
    numbers: Mapping[Enum, int] = field(converter=frozen_map)

    def number(self, member: Enum) -> int:
        return self.numbers[member]

    def member(self, number: int) -> Enum:
        for member, candidate in self.numbers.items():
            if candidate == number:
                return member
        raise KeyError(number)

    def labels(self) -> dict[str, str]:
        """The registry form: `{"<number>": "<label>"}`."""
        return {str(number): str(member.value) for member, number in self.numbers.items()}


@frozen
class FieldSpec:
    """One field: its pinned tag, the record attribute it maps to, and its wire kind.

    Attributes:
        tag: The numeric key in the msgpack map (never reused, never changed).
        name: The attribute of the record class and the field name in the registry.
        kind: `string`, `bool`, `u8`, `u32`, `u64`, `f64`, `map`, `array` or `ref`.
        since: The type version that introduced the field.
        enum: For enum fields (kind u8): the member numbering.
        ref: For `ref` fields, arrays of records and maps of records: the nested type.
        items: For arrays of scalars: the items' kind.
    """

    tag: int
    name: str
    kind: str
    since: int = 1
    enum: EnumSpec | None = None
    ref: TypeSpec | None = None
    items: str | None = None


@frozen
class TypeSpec:
    """A turn type (or a nested record type): id, current version, record class and fields.

    A field may name a read-only property of the record instead of an attrs field (a value kept on the
    wire for older readers, derived from other fields); `build` then turns the decoded values back into
    the record.
    """

    type_id: str
    version: int
    record: type
    fields: tuple[FieldSpec, ...] = field(converter=_field_tuple)
    build: Callable[..., object] | None = None

    def __attrs_post_init__(self) -> None:
        names = {a.name for a in attrs.fields(self.record)}
        tags = [f.tag for f in self.fields]
        if len(set(tags)) != len(tags):
            raise ValueError(f"{self.type_id}: duplicate field tag")
        for spec in self.fields:
            derived = isinstance(getattr(self.record, spec.name, None), property)
            if spec.name not in names and not (derived and self.build is not None):
                raise ValueError(f"{self.type_id}: {spec.name} is not a field of {self.record.__name__}")
            if spec.tag in RESERVED_TAGS or spec.tag < 1:
                raise ValueError(f"{self.type_id}: tag {spec.tag} of {spec.name} is reserved")
            if not 1 <= spec.since <= self.version:
                raise ValueError(f"{self.type_id}: {spec.name} since v{spec.since} > v{self.version}")

    def fields_at(self, version: int) -> tuple[FieldSpec, ...]:
        """The fields version `version` of the type has."""
        return tuple(f for f in self.fields if f.since <= version)

    def optional(self, spec: FieldSpec) -> bool:
        """A field is optional on the wire when its record default is None (derived fields always are)."""
        attribute = attrs.fields_dict(self.record).get(spec.name)
        return attribute is None or attribute.default is None

    def make(self, values: Mapping[str, Any]) -> object:
        """The record for decoded field values (missing fields take their defaults)."""
        return (self.build or self.record)(**values)


def field_spec(
    tag: int,
    name: str,
    kind: str,
    *,
    since: int = 1,
    enum: EnumSpec | None = None,
    ref: TypeSpec | None = None,
    items: str | None = None,
) -> FieldSpec:
    """A FieldSpec, checked for a consistent kind/enum/ref/items combination."""
    if kind == REF and ref is None:
        raise ValueError(f"{name}: a ref field needs the nested type")
    if kind == ARRAY and (ref is None) == (items is None):
        raise ValueError(f"{name}: an array needs exactly one of ref or items")
    if ref is not None and kind not in (REF, ARRAY, MAP):
        raise ValueError(f"{name}: only ref, array and map fields hold records")
    if kind not in (*SCALAR_KINDS, ARRAY, REF):
        raise ValueError(f"{name}: unknown kind {kind!r}")
    return FieldSpec(tag, name, kind, since, enum, ref, items)
