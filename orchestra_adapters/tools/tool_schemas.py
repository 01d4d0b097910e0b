"""Agent tools' argument schemas and checks, built by langchain-core (pydantic) from each tool's typed function.

Shared by every adapter that offers Orchestra's tools to a model: the LangGraph backend's toolbox and the
MCP tool server.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from langchain_core.tools import create_schema_from_function
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel, ValidationError

from orchestra_core.agents.tools import AgentTool
from orchestra_core.model.errors import OrchestraError

_KINDS = {
    "string_type": "a string",
    "int_type": "an integer",
    "float_type": "a number",
    "bool_type": "true or false",
    "list_type": "a list",
    "tuple_type": "a list",
    "dict_type": "an object",
}


class ToolSchemaError(OrchestraError):
    """A tool's parameters cannot be described to a model (an annotation without a JSON Schema type)."""


def schema_of(tool: AgentTool) -> dict[str, Any]:
    """The JSON Schema (an object schema) of the arguments the model passes to `tool`.

    Raises:
        ToolSchemaError: A parameter's annotation has no JSON Schema equivalent.
    """
    try:
        parameters = convert_to_openai_tool(_arguments_model(tool))["function"]["parameters"]
    except Exception as error:  # pydantic reports unsupported annotations with several error types
        raise ToolSchemaError(f"tool {tool.name}: its parameters have no JSON Schema ({error})") from None
    return dict(parameters)


def check_arguments(tool: AgentTool, arguments: Mapping[str, Any]) -> str | None:
    """Why the model's arguments do not fit the tool's parameters (naming the argument), or None when they do.

    Types are checked strictly (as JSON values: `"2"` is not an integer, `true` is not a number).
    """
    model = _arguments_model(tool)
    unknown = sorted(set(arguments) - set(model.model_fields))
    if unknown:
        return f"unknown argument(s): {', '.join(unknown)} (expected: {', '.join(model.model_fields) or 'none'})"
    try:
        model.model_validate(arguments_to_pass(tool, arguments), strict=True)
    except ValidationError as error:
        return _problem(error.errors(), arguments)
    return None


def arguments_to_pass(tool: AgentTool, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments to call the tool with: a null for a parameter that has a default means that default."""
    fields = _arguments_model(tool).model_fields
    return {
        name: value
        for name, value in arguments.items()
        if value is not None or name not in fields or fields[name].is_required()
    }


def _arguments_model(tool: AgentTool) -> type[BaseModel]:
    return _model_of(tool.source, tool.injected)


@functools.lru_cache(maxsize=512)
def _model_of(source: Callable[..., Any], injected: tuple[str, ...]) -> type[BaseModel]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # langchain's wrapper of pydantic's deprecated validate_arguments
        model = create_schema_from_function(
            "arguments", source, filter_args=injected, parse_docstring=True, error_on_invalid_docstring=False
        )
    return cast("type[BaseModel]", model)


def _problem(errors: Sequence[Any], arguments: Mapping[str, Any]) -> str:
    missing = [str(error["loc"][0]) for error in errors if error["type"] == "missing" and len(error["loc"]) == 1]
    if missing:
        return f"missing required argument(s): {', '.join(missing)}"
    where, value = _located(errors[0]["loc"], arguments)
    kinds = [_KINDS.get(error["type"]) for error in errors if _located(error["loc"], arguments)[0] == where]
    if all(kinds):
        expected = " or ".join(dict.fromkeys(str(kind) for kind in kinds))
        return f"argument {where} must be {expected}, got {type(value).__name__}"
    return f"argument {where}: {errors[0]['msg']}"


def _located(loc: Sequence[Any], arguments: Mapping[str, Any]) -> tuple[str, Any]:
    """How to name the value at a pydantic error location (`'tags'[1]`), and the value itself."""
    value: Any = arguments.get(loc[0])
    where = repr(loc[0])
    for part in loc[1:]:
        inside = isinstance(value, list) and isinstance(part, int) and 0 <= part < len(value)
        if not (inside or (isinstance(value, Mapping) and part in value)):
            break  # a union member's tag, not a step into the value
        value = value[part]
        where += f"[{part!r}]"
    return where, value
