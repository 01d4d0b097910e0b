"""An agent's tools: base set + additions - restrictions; workspace.tools commands as repo-scoped tools."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from orchestra_adapters.process.command_runner import SubprocessCommandRunner
from orchestra_core.agents.builtin_tools import BUILTIN_TOOL_NAMES
from orchestra_core.agents.registry import ToolRegistryError
from orchestra_core.agents.repo_context import RepoContext
from orchestra_core.agents.tools import AgentTool, WriteTracker, is_tool_error
from orchestra_core.agents.toolset import (
    DEFAULT_BASE_TOOLS,
    UnknownToolError,
    build_tools,
    create_registry,
    select_tools,
)
from orchestra_core.model.settings import (
    OrchestraSettings,
    RepoSettings,
    ToolCommandSettings,
    ToolParameterSettings,
    WorkspaceSettings,
)

AVAILABLE = (
    "backend:read-file", "backend:write-file", "backend:edit-file", "backend:search-code", "backend:list-files",
    "frontend:read-file", "frontend:write-file", "frontend:edit-file", "frontend:search-code", "frontend:list-files",
    "backend:run-tests", "frontend:run-lint", "run-integration-tests",
)


def test_base_set_is_every_builtin_of_every_repo() -> None:
    assert select_tools(AVAILABLE, DEFAULT_BASE_TOOLS, [], []) == AVAILABLE[:10]


def test_additions_come_after_the_base_set() -> None:
    names = select_tools(AVAILABLE, DEFAULT_BASE_TOOLS, ["backend:run-tests", "run-integration-tests", "backend:read-file"], [])
    assert names == (*AVAILABLE[:10], "backend:run-tests", "run-integration-tests")


def test_restrictions_remove_by_name_or_pattern() -> None:
    names = select_tools(AVAILABLE, DEFAULT_BASE_TOOLS, ["backend:run-tests"], ["*:write-file", "*:edit-file", "frontend:*"])
    assert names == ("backend:read-file", "backend:search-code", "backend:list-files", "backend:run-tests")


def test_restrictions_also_remove_additions() -> None:
    assert "backend:run-tests" not in select_tools(AVAILABLE, DEFAULT_BASE_TOOLS, ["backend:run-tests"], ["*:run-*"])


def test_backend_without_base_tools_offers_only_additions() -> None:
    assert select_tools(AVAILABLE, (), ["backend:run-tests"], []) == ("backend:run-tests",)


@pytest.mark.parametrize(
    ("additions", "restrictions", "unknown"),
    [(["backend:run-test"], [], "backend:run-test"), ([], ["mobile:*"], "mobile:*"), (["read-file"], [], "read-file")],
)
def test_unknown_names_are_errors(additions: list[str], restrictions: list[str], unknown: str) -> None:
    with pytest.raises(UnknownToolError, match=f"unknown tool\\(s\\): {unknown.replace('*', '[*]')} \\(available: backend:read-file"):
        select_tools(AVAILABLE, DEFAULT_BASE_TOOLS, additions, restrictions)


@pytest.fixture
def workspace(tmp_path: Path) -> tuple[OrchestraSettings, dict[str, RepoContext]]:
    python = sys.executable
    tools = {
        "backend": {
            "where": ToolCommandSettings(command="pwd; echo repo=$ORCHESTRA_REPO", description="Show where commands run"),
            "test": ToolCommandSettings(
                command=f"{python} -c 'import sys; print(sys.argv[1:])' {{target}} {{flags}}",
                parameters={"target": ToolParameterSettings(description="file"), "flags": ToolParameterSettings(default="-q")},
            ),
            "fail": ToolCommandSettings(command="echo out; echo err >&2; exit 3"),
            "slow": ToolCommandSettings(command="sleep 5", timeout=0.3),
        }
    }
    settings = OrchestraSettings(workspace=WorkspaceSettings(repos={"backend": RepoSettings(path="backend")}, tools=tools))
    (tmp_path / "backend").mkdir()
    return settings, {"backend": RepoContext("backend", tmp_path / "backend")}


def command_tools(
    workspace: tuple[OrchestraSettings, dict[str, RepoContext]], runner: SubprocessCommandRunner | None
) -> dict[str, AgentTool]:
    settings, repos = workspace
    registry = create_registry(settings, runner)
    names = [name for name in registry.names(list(repos)) if name.partition(":")[2] not in BUILTIN_TOOL_NAMES]
    return {tool.name: tool for tool in build_tools(registry, names, repos, WriteTracker())}


def test_commands_become_repo_scoped_tools(workspace: tuple[OrchestraSettings, dict[str, RepoContext]]) -> None:
    tools = command_tools(workspace, SubprocessCommandRunner())
    assert list(tools) == ["backend:where", "backend:test", "backend:fail", "backend:slow"]
    assert tools["backend:where"].description == "Show where commands run"
    assert tools["backend:fail"].description == "Run `echo out; echo err >&2; exit 3` in the backend repo."
    assert tools["backend:test"].injected == ("repo",)


def test_commands_run_in_the_repo_root(workspace: tuple[OrchestraSettings, dict[str, RepoContext]]) -> None:
    result = command_tools(workspace, SubprocessCommandRunner())["backend:where"].func()
    root = workspace[1]["backend"].root
    assert result.splitlines()[1].startswith("exit code 0 (")
    assert result.splitlines()[2:] == ["--- stdout ---", str(root), "repo=backend"]


def test_model_arguments_are_quoted_not_interpreted(workspace: tuple[OrchestraSettings, dict[str, RepoContext]], tmp_path: Path) -> None:
    tool = command_tools(workspace, SubprocessCommandRunner())["backend:test"]
    marker = tmp_path / "pwned"
    result = tool.func(target=f"a b; touch {marker}", flags="$(touch {marker})")
    assert f"['a b; touch {marker}', '$(touch {{marker}})']" in result
    assert not marker.exists()
    assert "['x', '-q']" in tool.func(target="x")


def test_failing_command_shows_exit_code_and_both_streams(workspace: tuple[OrchestraSettings, dict[str, RepoContext]]) -> None:
    result = command_tools(workspace, SubprocessCommandRunner())["backend:fail"].func()
    lines = result.splitlines()
    assert lines[0] == "$ echo out; echo err >&2; exit 3"
    assert lines[1].startswith("exit code 3 (")
    assert lines[2:] == ["--- stdout ---", "out", "--- stderr ---", "err"]
    assert not is_tool_error(result)


def test_timeout_is_a_tool_error(workspace: tuple[OrchestraSettings, dict[str, RepoContext]]) -> None:
    result = command_tools(workspace, SubprocessCommandRunner())["backend:slow"].func()
    assert is_tool_error(result)
    assert "timed out after" in result


def test_without_a_runner_names_register_but_do_not_run(workspace: tuple[OrchestraSettings, dict[str, RepoContext]]) -> None:
    result = command_tools(workspace, None)["backend:where"].func()
    assert is_tool_error(result) and "cannot run here" in result


def test_command_name_clashing_with_a_builtin_is_refused(tmp_path: Path) -> None:
    settings = OrchestraSettings(workspace=WorkspaceSettings(tools={"project": {"read-file": ToolCommandSettings(command="cat")}}))
    with pytest.raises(ToolRegistryError, match="registered twice"):
        create_registry(settings)


@pytest.mark.parametrize("name", ["repo", "class"])
def test_a_command_parameter_that_cannot_be_a_keyword_argument_is_refused(name: str) -> None:
    command = ToolCommandSettings(command=f"echo {{{name}}}", parameters={name: ToolParameterSettings()})
    settings = OrchestraSettings(workspace=WorkspaceSettings(tools={"project": {"t": command}}))
    with pytest.raises(ToolRegistryError, match=f"tool project:t: .*'{name}'.*rename the parameter"):
        create_registry(settings)
