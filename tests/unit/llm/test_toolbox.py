"""Toolbox and report_outcome: provider schemas, safe-name dispatch, and errors returned instead of raised."""

from __future__ import annotations

import json

import pytest

from orchestra_adapters.tools.report_outcome import outcome_from_report
from orchestra_adapters.tools.toolbox import Toolbox, ToolSetupError
from orchestra_core.agents.path_guard import ToolPathError
from orchestra_core.agents.tools import AgentTool, ToolFailure
from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.outcome import Outcome, StageStatus

SCHEMA = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "n": {"default": 0, "type": "integer"}},
    "required": ["path"],
}


def path_and_n(path: str, n: int = 0) -> str:
    """The tools' arguments."""
    return "ok"


def _tool(name: str, func=lambda **kwargs: "ok") -> AgentTool:
    return AgentTool(name, f"{name} tool", func, source=path_and_n)


def test_schemas_use_provider_safe_names_and_add_report_outcome() -> None:
    schemas = Toolbox([_tool("backend:run-tests"), _tool("search")]).schemas()
    names = [schema["function"]["name"] for schema in schemas]
    assert names == ["backend__run-tests", "search", "report_outcome"]
    assert schemas[0]["function"]["parameters"] == SCHEMA
    assert schemas[2]["function"]["parameters"]["required"] == ["status"]
    json.dumps(schemas)  # what providers receive must be plain JSON


def test_dispatch_by_safe_name_records_orchestra_names() -> None:
    box = Toolbox([_tool("backend:read-file", lambda path, n=0: f"read {path}")])
    executed = box.execute("backend__read-file", {"path": "a.py"}, "call_1")
    assert (executed.record.name, executed.record.result, executed.record.error) == (
        "backend:read-file",
        "read a.py",
        None,
    )
    assert executed.text == "read a.py" and not executed.failed
    assert box.orchestra_name("backend__read-file") == "backend:read-file"
    assert box.orchestra_name("made_up") == "made_up"


@pytest.mark.parametrize(
    ("args", "error"),
    [
        ({}, "missing required argument(s): path"),
        ({"path": 1}, "argument 'path' must be a string, got int"),
        ({"path": "a", "n": True}, "argument 'n' must be an integer, got bool"),
        ({"path": "a", "n": 1.5}, "argument 'n' must be an integer, got float"),
        ("not a mapping", "arguments must be a JSON object"),
    ],
)
def test_bad_arguments_are_errors_for_the_model(args: object, error: str) -> None:
    called: list[object] = []
    executed = Toolbox([_tool("t", lambda **kw: called.append(kw) or "ok")]).execute("t", args, "c")
    assert executed.record.error == error and executed.text == f"Error: {error}"
    assert called == []


def test_unknown_arguments_are_refused() -> None:
    executed = Toolbox([_tool("t")]).execute("t", {"path": "a", "x": 1}, "c")
    assert executed.record.error == "unknown argument(s): x (expected: path, n)"


def test_tool_failures_returned_as_text_are_errors() -> None:
    executed = Toolbox([_tool("t", lambda path: ToolFailure.of(f"{path} is locked"))]).execute(
        "t", {"path": "a"}, "c"
    )
    assert executed.failed and executed.record.error == "a is locked"
    assert executed.text == "Error: a is locked"


def test_exceptions_become_errors_and_orchestra_errors_keep_their_message() -> None:
    def refuse(path: str) -> str:
        raise ToolPathError(f"{path!r} contains '..'")

    def crash(path: str) -> str:
        raise KeyError("boom")

    box = Toolbox([_tool("refuse", refuse), _tool("crash", crash)])
    assert box.execute("refuse", {"path": "../x"}, "c").record.error == "'../x' contains '..'"
    assert box.execute("crash", {"path": "x"}, "c").record.error == "KeyError: 'boom'"


def test_unknown_tools_list_what_is_available() -> None:
    executed = Toolbox([_tool("repo:a")]).execute("repo__b", {}, "c")
    assert executed.record.error == "unknown tool 'repo__b'; available tools: repo__a, report_outcome"


def test_non_string_results_are_text() -> None:
    box = Toolbox([_tool("count", lambda path: 3), _tool("nothing", lambda path: None)])
    assert box.execute("count", {"path": "x"}, "c").record.result == "3"
    assert box.execute("nothing", {"path": "x"}, "c").record.result == ""


def test_safe_name_clashes_and_the_reserved_name_are_setup_errors() -> None:
    with pytest.raises(OrchestraError, match="'a:b' and 'a__b' share the provider name 'a__b'"):
        Toolbox([_tool("a:b"), _tool("a__b")])
    with pytest.raises(ToolSetupError, match="reserved"):
        Toolbox([_tool("report_outcome")])


def test_report_outcome_records_the_outcome() -> None:
    executed = Toolbox([]).execute("report_outcome", {"status": "partial_success", "notes": "half done"}, "c")
    assert executed.outcome == Outcome(StageStatus.PARTIAL_SUCCESS, notes="half done")
    assert executed.record.name == "report_outcome" and not executed.failed


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({}, "status is required"),
        ({"status": "skipped"}, "status must be one of"),
        ({"status": "great"}, "great"),
        ({"status": "fail", "suggested_next_ids": "x"}, "suggested_next_ids"),
        ({"status": "fail", "context_updates": [1]}, "context_updates"),
    ],
)
def test_invalid_reports_are_errors(args: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        outcome_from_report(args)
    assert Toolbox([]).execute("report_outcome", args, "c").outcome is None


def test_fail_and_retry_reports_always_have_a_reason() -> None:
    assert outcome_from_report({"status": "retry"}).failure_reason == "the agent reported retry"
    assert outcome_from_report({"status": "fail", "notes": "no tests"}).failure_reason == "no tests"
    assert outcome_from_report({"status": "success"}).failure_reason == ""
