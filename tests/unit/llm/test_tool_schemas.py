"""Tool schemas and argument checks from typed functions: registered, built-in and command tools alike."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from orchestra_adapters.process.command_runner import SubprocessCommandRunner
from orchestra_adapters.tools.tool_schemas import (
    ToolSchemaError,
    arguments_to_pass,
    check_arguments,
    schema_of,
)
from orchestra_adapters.tools.toolbox import Toolbox
from orchestra_core.agents.builtin_tools import BUILTIN_TOOL_NAMES
from orchestra_core.agents.hooks import ToolHooks
from orchestra_core.agents.registry import ToolRegistry
from orchestra_core.agents.repo_context import RepoContext
from orchestra_core.agents.tools import AgentTool, WriteTracker
from orchestra_core.agents.toolset import build_tools, create_registry
from orchestra_core.model.settings import (
    OrchestraSettings,
    RepoSettings,
    ToolCommandSettings,
    ToolParameterSettings,
    WorkspaceSettings,
)


@pytest.fixture
def repos(tmp_path: Path) -> dict[str, RepoContext]:
    (tmp_path / "backend").mkdir()
    return {"backend": RepoContext("backend", tmp_path / "backend")}


@pytest.fixture
def registered(repos: dict[str, RepoContext]) -> dict[str, AgentTool]:
    registry = ToolRegistry()

    @registry.register_builtin("count-files")
    def count_files(repo: RepoContext, suffix: str = "") -> str:
        """Count the repo's files.

        Args:
            suffix: Only files ending with this, e.g. `.py`.
                Empty counts every file.
        """
        return suffix

    @registry.register("run-migration", repo="backend")
    def run_migration(steps: int, dry_run: bool = False) -> str:
        """Run database migrations."""
        return f"{steps} {dry_run}"

    @registry.register("run-integration-tests")
    def run_integration_tests(repos: Mapping[str, RepoContext], tags: list[str] | None = None) -> str:
        """Run integration tests spanning every repo."""
        return f"{tags}"

    tools = registry.build(registry.names(list(repos)), repos, WriteTracker())
    return {tool.name: tool for tool in tools}


def test_schemas_come_from_signatures_and_docstrings_without_injected_parameters(
    registered: dict[str, AgentTool],
) -> None:
    assert schema_of(registered["backend:count-files"]) == {
        "type": "object",
        "properties": {
            "suffix": {
                "type": "string",
                "default": "",
                "description": "Only files ending with this, e.g. `.py`. Empty counts every file.",
            }
        },
    }
    migration = schema_of(registered["backend:run-migration"])
    assert migration["properties"] == {"steps": {"type": "integer"}, "dry_run": {"type": "boolean", "default": False}}
    assert migration["required"] == ["steps"]
    tags = schema_of(registered["run-integration-tests"])["properties"]["tags"]
    assert {"type": "array", "items": {"type": "string"}} in tags["anyOf"]


def test_builtin_tools_have_described_schemas(repos: dict[str, RepoContext]) -> None:
    names = [f"backend:{name}" for name in BUILTIN_TOOL_NAMES]
    tools = {tool.name: tool for tool in build_tools(create_registry(OrchestraSettings()), names, repos, WriteTracker())}
    read = schema_of(tools["backend:read-file"])
    assert read["required"] == ["path"]
    assert read["properties"]["path"] == {"type": "string", "description": "File path relative to the repo root."}
    assert set(schema_of(tools["backend:write-file"])["properties"]) == {"path", "content"}


def test_command_tools_have_typed_signatures(repos: dict[str, RepoContext]) -> None:
    command = ToolCommandSettings(
        command=f"{sys.executable} -c 'import sys; print(sys.argv[1:])' {{target}} {{flags}}",
        parameters={"target": ToolParameterSettings(description="file"), "flags": ToolParameterSettings(default="-q")},
    )
    workspace = WorkspaceSettings(repos={"backend": RepoSettings(path="backend")}, tools={"backend": {"test": command}})
    registry = create_registry(OrchestraSettings(workspace=workspace), SubprocessCommandRunner())
    [tool] = build_tools(registry, ["backend:test"], repos, WriteTracker())
    assert schema_of(tool) == {
        "type": "object",
        "properties": {
            "target": {"type": "string", "description": "file"},
            "flags": {"type": "string", "default": "-q"},
        },
        "required": ["target"],
    }
    box = Toolbox([tool])
    assert box.execute("backend__test", {}, "c").record.error == "missing required argument(s): target"
    assert box.execute("backend__test", {"target": 3}, "c").record.error == "argument 'target' must be a string, got int"
    assert "['x', '-q']" in box.execute("backend__test", {"target": "x", "flags": None}, "c").text


def test_bad_arguments_to_builtin_tools_come_back_to_the_model_naming_the_argument(
    repos: dict[str, RepoContext],
) -> None:
    tools = build_tools(create_registry(OrchestraSettings()), ["backend:read-file"], repos, WriteTracker())
    box = Toolbox(tools)

    def error(**arguments: Any) -> str | None:
        return box.execute("backend__read-file", arguments, "c").record.error

    assert error() == "missing required argument(s): path"
    assert error(path="README.md", encoding="latin-1") == (
        "unknown argument(s): encoding (expected: path, start_line, end_line)"
    )
    assert error(path="README.md", start_line="2") == "argument 'start_line' must be an integer, got str"
    assert error(path="README.md", repo="elsewhere") == (
        "unknown argument(s): repo (expected: path, start_line, end_line)"
    )


def test_nested_and_union_arguments_are_named_precisely() -> None:
    def typed(tags: list[str], limit: int | str = 0, options: dict[str, int] | None = None) -> str:
        return "ok"

    tool = AgentTool("t", "", typed)
    assert check_arguments(tool, {"tags": ["a", 1]}) == "argument 'tags'[1] must be a string, got int"
    assert check_arguments(tool, {"tags": [], "limit": 1.5}) == (
        "argument 'limit' must be an integer or a string, got float"
    )
    assert check_arguments(tool, {"tags": [], "options": {"k": "v"}}) == (
        "argument 'options'['k'] must be an integer, got str"
    )
    assert check_arguments(tool, {"tags": "a"}) == "argument 'tags' must be a list, got str"
    assert check_arguments(tool, {"tags": [], "limit": 2, "options": {"k": 1}}) is None


def test_null_means_the_default_for_parameters_that_have_one() -> None:
    def typed(path: str, pattern: str = "*") -> str:
        return pattern

    tool = AgentTool("t", "", typed)
    assert check_arguments(tool, {"path": "a", "pattern": None}) is None
    assert arguments_to_pass(tool, {"path": "a", "pattern": None}) == {"path": "a"}
    assert check_arguments(tool, {"path": None}) == "argument 'path' must be a string, got NoneType"


def test_hooked_tools_keep_their_schema(tmp_path: Path, registered: dict[str, AgentTool]) -> None:
    tool = registered["backend:run-migration"]
    hooks = ToolHooks(SubprocessCommandRunner(), cwd=str(tmp_path), node_id="n", pre="true")
    [hooked] = hooks.wrap([tool])
    assert hooked.func is not tool.func and schema_of(hooked) == schema_of(tool)


def test_an_annotation_without_a_json_schema_is_a_setup_error() -> None:
    class Opaque:
        pass

    def odd(thing: Opaque) -> str:
        return ""

    with pytest.raises(ToolSchemaError, match="tool odd: its parameters have no JSON Schema"):
        schema_of(AgentTool("odd", "", odd))
