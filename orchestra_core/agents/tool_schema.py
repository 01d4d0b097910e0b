"""JSON Schema and descriptions for agent tools, derived from a Python function's signature and docstring."""

from __future__ import annotations

import inspect
import re
import types
import typing
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

_JSON_TYPES: Mapping[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}
_ARG_LINE_RE = re.compile(r"^(\w+)(?:\s*\([^)]*\))?:\s*(.*)$")


def describe(func: Callable[..., Any]) -> str:
    """The docstring's text before its `Args:`/`Returns:` sections, as one paragraph block."""
    doc = inspect.getdoc(func) or ""
    summary = re.split(r"\n\s*(?:Args|Arguments|Returns|Raises):\s*\n", doc, maxsplit=1)[0]
    return summary.strip()


def parameters_schema(func: Callable[..., Any], injected: Collection[str]) -> dict[str, Any]:
    """An object schema of the function's parameters, leaving out the injected ones.

    Raises:
        TypeError: A parameter's annotation has no JSON Schema equivalent (a programming error).
    """
    hints = typing.get_type_hints(func)
    docs = _argument_docs(func)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, parameter in inspect.signature(func).parameters.items():
        if name in injected:
            continue
        schema = _schema_for(hints.get(name, str), f"{func.__name__}({name})")
        if name in docs:
            schema["description"] = docs[name]
        if parameter.default is inspect.Parameter.empty:
            required.append(name)
        elif parameter.default is not None:
            schema["default"] = parameter.default
        properties[name] = schema
    return {"type": "object", "properties": properties, "required": required}


def check_arguments(schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> str | None:
    """Why the model's arguments do not fit the schema, or None when they do."""
    properties = schema.get("properties", {})
    unknown = sorted(set(arguments) - set(properties))
    if unknown:
        return f"unknown argument(s): {', '.join(unknown)} (expected: {', '.join(properties) or 'none'})"
    missing = [name for name in schema.get("required", ()) if name not in arguments]
    if missing:
        return f"missing required argument(s): {', '.join(missing)}"
    for name, value in arguments.items():
        if value is not None and not _fits(properties[name], value):
            return f"argument {name!r} must be {_type_phrase(properties[name])}, got {type(value).__name__}"
    return None


def _schema_for(annotation: Any, where: str) -> dict[str, Any]:
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        options = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        if len(options) == 1:
            return _schema_for(options[0], where)
    if annotation in _JSON_TYPES:
        return {"type": _JSON_TYPES[annotation]}
    if origin in (list, tuple, Sequence, Collection) or annotation in (list, tuple):
        args = [arg for arg in typing.get_args(annotation) if arg is not Ellipsis]
        return {"type": "array", "items": _schema_for(args[0], where) if args else {}}
    if origin in (dict, Mapping) or annotation is dict:
        return {"type": "object"}
    raise TypeError(f"{where}: annotation {annotation!r} has no JSON Schema type (use str, int, float, bool, list, dict)")


def _fits(schema: Mapping[str, Any], value: Any) -> bool:
    kind = schema.get("type")
    if kind == "string":
        return isinstance(value, str)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "array":
        return isinstance(value, list) and all(_fits(schema.get("items", {}), item) for item in value)
    if kind == "object":
        return isinstance(value, dict)
    return True


def _type_phrase(schema: Mapping[str, Any]) -> str:
    return {"string": "a string", "integer": "an integer", "number": "a number", "boolean": "true or false",
            "array": "a list", "object": "an object"}.get(schema.get("type", ""), "a value")


def _argument_docs(func: Callable[..., Any]) -> dict[str, str]:
    doc = inspect.getdoc(func) or ""
    match = re.search(r"\n\s*(?:Args|Arguments):\s*\n(.*?)(?:\n\s*\n|\Z)", doc, flags=re.S)
    if match is None:
        return {}
    lines = [line for line in match.group(1).splitlines() if line.strip()]
    indent = _indent(lines[0]) if lines else 0
    docs: dict[str, str] = {}
    last = None
    for line in lines:
        argument = _ARG_LINE_RE.match(line.strip()) if _indent(line) == indent else None
        if argument:
            last = argument.group(1)
            docs[last] = argument.group(2).strip()
        elif last:
            docs[last] += " " + line.strip()
    return docs


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())
