"""Strict structuring of YAML data into attrs classes, with errors that name the file, line and key path."""

from __future__ import annotations

import datetime
import difflib
import math
import types
import typing
from collections.abc import Callable, Iterator, Mapping
from decimal import Decimal
from typing import Any, Literal, TypeVar

import attrs
import cattrs
from cattrs.errors import (
    AttributeValidationNote,
    ForbiddenExtraKeysError,
    IterableValidationError,
    IterableValidationNote,
)
from cattrs.gen import make_dict_structure_fn, make_mapping_structure_fn, override

from orchestra_adapters.config.yaml_source import KeyPath, YamlSource, render_key_path
from orchestra_core.model.settings import (
    CLI_AGENT_KEYS,
    ConfigError,
    ConfigProblem,
    OrchestraSettings,
    PositiveCount,
    PositiveDollars,
    ProviderSettings,
    ProvidersSettings,
    Seconds,
)
from orchestra_core.model.values import parse_duration

T = TypeVar("T")

# Fields the loader fills in itself; they are not YAML keys (a provider's `fallbacks` come from `models.<alias>`).
_LOADER_FIELDS: Mapping[type, tuple[str, ...]] = {
    OrchestraSettings: ("source_path", "project_root"),
    ProviderSettings: ("fallbacks",),
}
# `cli_agents` gathers the top-level `claude_code:` and `codex:` sections; as a key of its own it is unknown.
_CLI_AGENTS_KEY = "\0cli_agents"
_BACKEND_KEYS = {backend: key for key, backend in CLI_AGENT_KEYS.items()}


class _Mismatch(Exception):
    """A value of the wrong type or form; the message is the user-facing detail."""


@attrs.frozen
class _ModelAlias:
    """`providers.<p>.models.<alias>` in its mapping form: the model and what it falls back to (None: the key is
    absent or empty; an empty list is kept, to be reported)."""

    model: str
    fallbacks: tuple[str, ...] | None = None


_AliasEntry = typing.NewType("_AliasEntry", object)  # a model name, or a _ModelAlias

def structure_yaml(source: YamlSource, cls: type[T], data: Any = None) -> T:
    """Structure `source.data` (or `data`, shaped like it) into `cls`, rejecting unknown keys and wrong types.

    Raises:
        ConfigError: Every problem found, each with the file, line and key path.
    """
    try:
        return _CONVERTER.structure(source.data if data is None else data, cls)
    except Exception as error:  # cattrs groups every failure; each one becomes a located problem
        problems = sorted(_located(source, error), key=_file_order)
        raise ConfigError(problems or [ConfigProblem(str(error), source.file)]) from None


def _file_order(problem: ConfigProblem) -> tuple[bool, int, str]:
    return problem.line is None, problem.line or 0, problem.key or ""


def _located(source: YamlSource, error: BaseException) -> Iterator[ConfigProblem]:
    for path, leaf, expected in _leaves(error, (), None):
        path = _yaml_path(path)
        if isinstance(leaf, ForbiddenExtraKeysError):
            for key in sorted(leaf.extra_fields, key=str):  # YAML keys need not be strings
                yield _problem(source, (*path, key), _unknown_key(key, _allowed_keys(leaf.cl)))
        elif isinstance(leaf, KeyError):
            yield _problem(source, path, "required key is missing")
        elif isinstance(leaf, _Mismatch):
            yield _problem(source, path, str(leaf))
        else:
            yield _problem(source, path, f"expected {_describe(expected)}")


def _leaves(
    error: BaseException, path: KeyPath, expected: Any
) -> Iterator[tuple[KeyPath, BaseException, Any]]:
    if isinstance(error, BaseExceptionGroup):
        for sub in error.exceptions:
            step, sub_expected = _step(sub)
            yield from _leaves(sub, path + step, sub_expected if step else expected)
    else:
        yield path, error, expected


def _step(error: BaseException) -> tuple[KeyPath, Any]:
    for note in getattr(error, "__notes__", ()):
        if isinstance(note, AttributeValidationNote):
            return (note.name,), note.type
        if isinstance(note, IterableValidationNote):
            return (note.index,), note.type
    return (), None


def _yaml_path(path: KeyPath) -> KeyPath:
    """Undo the reshaping of `providers:` (`providers.entries.X` is `providers.X` in the file)."""
    if path[:2] == ("providers", "entries"):
        return ("providers", *path[2:])
    if path[:1] == ("cli_agents",) and len(path) > 1 and path[1] in _BACKEND_KEYS:
        return (_BACKEND_KEYS[str(path[1])], *path[2:])
    return path


def _problem(source: YamlSource, path: KeyPath, detail: str) -> ConfigProblem:
    return ConfigProblem(detail, source.file, source.line_of(path), render_key_path(path) or None)


def _unknown_key(key: str, allowed: list[str]) -> str:
    close = difflib.get_close_matches(str(key), allowed, n=1, cutoff=0.6)
    if close:
        return f"unknown key (did you mean {close[0]}?)"
    return f"unknown key (expected one of: {', '.join(allowed)})" if allowed else "unknown key"


def _allowed_keys(cls: type) -> list[str]:
    omitted = _LOADER_FIELDS.get(cls, ())
    names = [a.name for a in attrs.fields(cls) if a.name not in omitted]
    if cls is OrchestraSettings:
        names = [name for name in names if name != "cli_agents"] + list(CLI_AGENT_KEYS)
    return names


def _describe(expected: Any) -> str:
    origin = typing.get_origin(expected)
    if origin in (typing.Union, types.UnionType):
        options = [arg for arg in typing.get_args(expected) if arg is not type(None)]
        return " or ".join(_describe(option) for option in options)
    if origin is Literal:
        return "one of " + ", ".join(map(str, typing.get_args(expected)))
    if expected in (str,):
        return "a string"
    if expected is bool:
        return "true or false"
    if expected is int:
        return "an integer"
    if expected in (float, Seconds):
        return "a number"
    if expected in (Decimal, PositiveDollars):
        return "a number of US dollars"
    if expected is PositiveCount:
        return "a whole number"
    if origin is tuple or expected is tuple:
        return "a list"
    return "a mapping"


def _kind(value: Any) -> str:
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, int | float):
        return f"a number ({value})"
    if isinstance(value, str):
        return f"a string ({value!r})"
    if isinstance(value, datetime.date):
        return f"a date ({value.isoformat()})"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def _mismatch(expected: str, value: Any) -> _Mismatch:
    hint = "; quote it to make it text" if expected == "a string" and not isinstance(value, list | dict) else ""
    return _Mismatch(f"expected {expected}, got {_kind(value)}{hint}")


def _strict_str(value: Any, _type: Any) -> str:
    if isinstance(value, str):
        return value
    raise _mismatch("a string", value)


def _strict_int(value: Any, _type: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise _mismatch("an integer", value)


def _strict_float(value: Any, _type: Any) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    raise _mismatch("a number", value)


def _strict_bool(value: Any, _type: Any) -> bool:
    if isinstance(value, bool):
        return value
    raise _mismatch("true or false", value)


_MAX_PRICE = 1_000_000  # US dollars per million tokens
_MAX_BUDGET = 1_000_000_000


def _price(value: Any, _type: Any) -> Decimal:
    """A price per million tokens: a number of 0 or more (`3`, `0.30`)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _mismatch("a number of US dollars of 0 or more (such as 3 or 0.30)", value)
    if value < 0 or value > _MAX_PRICE:
        raise _Mismatch(f"expected a number of US dollars from 0 to {_MAX_PRICE:,} (per million tokens), got {value}")
    return Decimal(repr(value)) if isinstance(value, float) else Decimal(value)


def _positive_dollars(value: Any, _type: Any) -> Decimal:
    """A budget in US dollars: a number above 0 (`5`, `2.50`)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _mismatch("a number of US dollars above 0 (such as 5 or 2.50)", value)
    if value <= 0 or value > _MAX_BUDGET:
        raise _Mismatch(f"expected a number of US dollars above 0 (at most {_MAX_BUDGET:,}), got {value}")
    return Decimal(repr(value)) if isinstance(value, float) else Decimal(value)


def _positive_count(value: Any, _type: Any) -> int:
    """A whole number of 1 or more (`2000000`)."""
    number = _strict_int(value, int)
    if number < 1:
        raise _Mismatch(f"expected a whole number of 1 or more, got {value}")
    return number


def _seconds(value: Any, _type: Any) -> float:
    if isinstance(value, str):
        try:
            return parse_duration(value)
        except ValueError:
            raise _mismatch("a duration such as 90, 90s, 10m or 1h", value) from None
    try:
        seconds = _strict_float(value, float)
    except _Mismatch:
        raise _mismatch("a duration such as 90, 90s, 10m or 1h", value) from None
    if seconds <= 0:
        raise _Mismatch(f"expected a positive duration, got {value}")
    return seconds


def _literal_hook(cls: Any) -> Callable[[Any, Any], Any]:
    choices = typing.get_args(cls)

    def structure(value: Any, _type: Any) -> Any:
        if value in choices and isinstance(value, str):
            return value
        raise _Mismatch(f"expected one of {', '.join(map(str, choices))}, got {_kind(value)}")

    return structure


def _tuple_hook(cls: Any, converter: cattrs.Converter) -> Callable[[Any, Any], tuple[Any, ...]]:
    item_type = typing.get_args(cls)[0]

    def structure(value: Any, _type: Any) -> tuple[Any, ...]:
        if value is None:
            return ()
        if not isinstance(value, list):
            raise _mismatch("a list", value)
        items, errors = [], []
        for index, item in enumerate(value):
            try:
                items.append(converter.structure(item, item_type))
            except Exception as error:
                error.add_note(IterableValidationNote(f"Structuring item @ index {index}", index, item_type))
                errors.append(error)
        if errors:
            raise IterableValidationError(f"While structuring {cls}", errors, cls)
        return tuple(items)

    return structure


def _mapping_hook(cls: Any, converter: cattrs.Converter) -> Callable[[Any, Any], Any]:
    generated = make_mapping_structure_fn(cls, converter, structure_to=dict)

    def structure(value: Any, _type: Any) -> Any:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise _mismatch("a mapping", value)
        return generated(value, _type)

    return structure


def _attrs_hook(cls: type, converter: cattrs.Converter) -> Callable[[Any, Any], Any]:
    # Any values: mypy would check each override against make_dict_structure_fn's `_cattrs_*` flags too.
    overrides: dict[str, Any] = {name: override(omit=True) for name in _LOADER_FIELDS.get(cls, ())}
    if cls is OrchestraSettings:
        overrides["cli_agents"] = override(rename=_CLI_AGENTS_KEY)
    if cls is ProviderSettings:
        overrides["models"] = override(struct_hook=lambda value, _: converter.structure(value, dict[str, _AliasEntry]))
    generated: Callable[[Mapping[str, Any], Any], Any] = make_dict_structure_fn(cls, converter, **overrides)

    def structure(value: Any, _type: Any) -> Any:
        if value is None:
            value = {}
        if not isinstance(value, dict):
            raise _mismatch("a mapping", value)
        if cls is ProvidersSettings:
            value = _reshape_providers(value)
        elif cls is OrchestraSettings:
            value = _gather_cli_agents(value)
        structured = generated(value, _type)
        return _split_aliases(structured) if cls is ProviderSettings else structured

    return structure


def _alias_entry(converter: cattrs.Converter) -> Callable[[Any, Any], Any]:
    def structure(value: Any, _type: Any) -> Any:
        if isinstance(value, str):
            return value
        if isinstance(value, dict):
            return converter.structure(value, _ModelAlias)
        raise _Mismatch(f"expected a model name or a mapping with model and fallbacks, got {_kind(value)}")

    return structure


def _split_aliases(settings: ProviderSettings) -> ProviderSettings:
    """`models` keeps each alias's model; the fallbacks of aliases in mapping form go to `fallbacks`."""
    entries: Mapping[str, Any] = settings.models
    models = {alias: entry.model if isinstance(entry, _ModelAlias) else entry for alias, entry in entries.items()}
    fallbacks = {
        alias: entry.fallbacks
        for alias, entry in entries.items()
        if isinstance(entry, _ModelAlias) and entry.fallbacks is not None
    }
    return attrs.evolve(settings, models=models, fallbacks=fallbacks)


def _reshape_providers(value: dict[str, Any]) -> dict[str, Any]:
    """`providers:` mixes `default: name` with one key per provider; the class keeps them apart."""
    entries = {name: settings for name, settings in value.items() if name != "default"}
    return {"default": value.get("default"), "entries": entries}


def _gather_cli_agents(value: dict[str, Any]) -> dict[str, Any]:
    """`claude_code:` and `codex:` go under `cli_agents` by backend name (`claude-code`, `codex`)."""
    agents = {CLI_AGENT_KEYS[key]: section for key, section in value.items() if key in CLI_AGENT_KEYS}
    rest = {key: section for key, section in value.items() if key not in CLI_AGENT_KEYS}
    return {**rest, _CLI_AGENTS_KEY: agents} if agents else rest


def _is_literal(cls: Any) -> bool:
    return typing.get_origin(cls) is Literal


def _is_variadic_tuple(cls: Any) -> bool:
    args = typing.get_args(cls)
    return typing.get_origin(cls) is tuple and len(args) == 2 and args[1] is Ellipsis


def _is_mapping(cls: Any) -> bool:
    return typing.get_origin(cls) in (Mapping, dict)


def make_converter() -> cattrs.Converter:
    """The loader's converter: strict scalars, no unknown keys, null sections mean defaults."""
    converter = cattrs.Converter(forbid_extra_keys=True, detailed_validation=True)
    converter.register_structure_hook(str, _strict_str)
    converter.register_structure_hook(int, _strict_int)
    converter.register_structure_hook(float, _strict_float)
    converter.register_structure_hook(bool, _strict_bool)
    converter.register_structure_hook(Seconds, _seconds)
    converter.register_structure_hook(_AliasEntry, _alias_entry(converter))
    converter.register_structure_hook(Decimal, _price)
    converter.register_structure_hook(PositiveDollars, _positive_dollars)
    converter.register_structure_hook(PositiveCount, _positive_count)
    converter.register_structure_hook_factory(_is_literal, _literal_hook)
    converter.register_structure_hook_factory(_is_variadic_tuple, lambda cls: _tuple_hook(cls, converter))
    converter.register_structure_hook_factory(_is_mapping, lambda cls: _mapping_hook(cls, converter))
    converter.register_structure_hook_factory(attrs.has, lambda cls: _attrs_hook(cls, converter))
    return converter


_CONVERTER = make_converter()
