"""The tools of one node execution: provider-facing schemas, and running the model's calls without raising."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from attrs import frozen

from orchestra_adapters.tools.report_outcome import (
    REPORT_OUTCOME,
    REPORT_OUTCOME_DESCRIPTION,
    REPORT_OUTCOME_SCHEMA,
    outcome_from_report,
)
from orchestra_adapters.tools.tool_schemas import arguments_to_pass, check_arguments, schema_of
from orchestra_core.agents.tools import AgentTool, index_by_safe_name, is_tool_error
from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.outcome import Outcome
from orchestra_core.model.turn import ToolCall


class ToolSetupError(OrchestraError):
    """A node's tools cannot be offered to a model (a tool takes the built-in report_outcome's name)."""


@frozen
class ExecutedCall:
    """A tool call after it ran: the record for the AgentTurn and, for `report_outcome`, the Outcome."""

    record: ToolCall
    outcome: Outcome | None = None

    @property
    def text(self) -> str:
        """What the model sees as the tool's result."""
        return f"Error: {self.record.error}" if self.record.error is not None else self.record.result or ""

    @property
    def failed(self) -> bool:
        return self.record.error is not None


class Toolbox:
    """A node's tools keyed by provider-safe name, plus the built-in `report_outcome`."""

    def __init__(self, tools: Sequence[AgentTool]) -> None:
        reserved = [tool.name for tool in tools if tool.safe_name == REPORT_OUTCOME]
        if reserved:
            raise ToolSetupError(
                f"tool name {reserved[0]!r} is reserved for the built-in report_outcome tool"
            )
        self._tools = index_by_safe_name(tools)

    def schemas(self) -> list[dict[str, Any]]:
        """Function definitions in the OpenAI format every LangChain chat model's `bind_tools` accepts.

        Raises:
            ToolSchemaError: A tool's parameters have no JSON Schema.
        """
        definitions = [
            _definition(safe_name, tool.description, schema_of(tool)) for safe_name, tool in self._tools.items()
        ]
        definitions.append(_definition(REPORT_OUTCOME, REPORT_OUTCOME_DESCRIPTION, REPORT_OUTCOME_SCHEMA))
        return definitions

    def orchestra_name(self, safe_name: str) -> str:
        """The Orchestra name (`repo:tool`) of a name the model used (unknown names come back unchanged)."""
        tool = self._tools.get(safe_name)
        return tool.name if tool is not None else safe_name

    def safe_name_of(self, name: str) -> str:
        """The provider-safe name an agent meant: exact, else with `_` read as `-` (Codex renames `-` to `_`)."""
        if name in self._tools or name == REPORT_OUTCOME:
            return name
        relaxed = [safe for safe in self._tools if safe.replace("-", "_") == name]
        return relaxed[0] if len(relaxed) == 1 else name

    def execute(self, safe_name: str, args: Any, call_id: str) -> ExecutedCall:
        """Run one call. Unknown tools, bad arguments and exceptions become errors the model can read."""
        name = self.orchestra_name(safe_name)
        arguments = dict(args) if isinstance(args, Mapping) else {}
        if not isinstance(args, Mapping):
            return _failed(name, arguments, call_id, "arguments must be a JSON object")
        if safe_name == REPORT_OUTCOME:
            return self._report(arguments, call_id)
        tool = self._tools.get(safe_name)
        if tool is None:
            available = ", ".join(sorted([*self._tools, REPORT_OUTCOME]))
            return _failed(
                name, arguments, call_id, f"unknown tool {safe_name!r}; available tools: {available}"
            )
        problem = check_arguments(tool, arguments)
        if problem is not None:
            return _failed(name, arguments, call_id, problem)
        try:
            result = tool.func(**arguments_to_pass(tool, arguments))
        except OrchestraError as error:
            return _failed(name, arguments, call_id, str(error))
        except Exception as error:  # a tool's bug or failure goes back to the model, never ends the run
            return _failed(name, arguments, call_id, f"{type(error).__name__}: {error}")
        if is_tool_error(result):
            return _failed(name, arguments, call_id, result.message)
        return ExecutedCall(ToolCall(name, arguments, call_id, result="" if result is None else str(result)))

    def _report(self, arguments: dict[str, Any], call_id: str) -> ExecutedCall:
        try:
            outcome = outcome_from_report(arguments)
        except ValueError as error:
            return _failed(REPORT_OUTCOME, arguments, call_id, str(error))
        result = f"Outcome recorded: {outcome.status.value}. The stage ends after this turn."
        return ExecutedCall(ToolCall(REPORT_OUTCOME, arguments, call_id, result=result), outcome)


def _failed(name: str, args: Mapping[str, Any], call_id: str, error: str) -> ExecutedCall:
    return ExecutedCall(ToolCall(name, args, call_id, error=error))


def _definition(name: str, description: str, parameters: Mapping[str, Any]) -> dict[str, Any]:
    schema = dict(parameters) if parameters else {"type": "object", "properties": {}}
    return {"type": "function", "function": {"name": name, "description": description, "parameters": schema}}
