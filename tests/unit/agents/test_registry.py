"""The tool registry: decorator registration, injected parameters, @modifies_files, names and safe names."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest

from orchestra_core.agents.registry import ToolRegistry, ToolRegistryError, modifies_files
from orchestra_core.agents.repo_context import RepoContext
from orchestra_core.agents.tools import (
    AgentTool,
    WriteTracker,
    index_by_safe_name,
    is_tool_error,
    provider_safe_name,
)
from orchestra_core.model.errors import OrchestraError


@pytest.fixture
def repos(tmp_path: Path) -> dict[str, RepoContext]:
    for name in ("backend", "frontend"):
        (tmp_path / name).mkdir()
    return {name: RepoContext(name, tmp_path / name) for name in ("backend", "frontend")}


@pytest.fixture
def registry() -> ToolRegistry:
    registry = ToolRegistry()

    @registry.register_builtin("count-files")
    def count_files(repo: RepoContext, suffix: str = "") -> str:
        """Count the repo's files.

        Args:
            suffix: Only files ending with this, e.g. `.py`.
                Empty counts every file.
        """
        return str(sum(1 for path in repo.root.rglob("*") if path.is_file() and path.name.endswith(suffix)))

    @registry.register("run-migration", repo="backend")
    def run_migration(steps: int, dry_run: bool = False) -> str:
        """Run database migrations."""
        return f"migrated {steps} step(s){' (dry run)' if dry_run else ''}"

    @registry.register("run-integration-tests")
    def run_integration_tests(repos: Mapping[str, RepoContext], tags: list[str] | None = None) -> str:
        """Run integration tests spanning frontend and backend."""
        return f"ran {','.join(sorted(repos))} with {tags or []}"

    @registry.register("apply-patch", repo="frontend")
    @modifies_files
    def apply_patch(repo: RepoContext, files: list[str]) -> list[str]:
        """Apply a patch; returns the modified paths."""
        for name in files:
            (repo.root / name).write_text("patched\n", encoding="utf-8")
        return [str(repo.root / files[0]), *files[1:]]

    @modifies_files
    @registry.register("touch-everywhere")
    def touch_everywhere(repos: Mapping[str, RepoContext], name: str) -> list[str]:
        """Create a file in every repo."""
        for repo in repos.values():
            (repo.root / name).write_text("", encoding="utf-8")
        return [f"{repo}:{name}" for repo in repos]

    return registry


def built(registry: ToolRegistry, repos: dict[str, RepoContext], tracker: WriteTracker) -> dict[str, AgentTool]:
    return {tool.name: tool for tool in registry.build(registry.names(list(repos)), repos, tracker)}


def test_names_builtin_per_repo_then_repo_scoped_then_cross_repo(registry: ToolRegistry) -> None:
    assert registry.names(["backend", "frontend"]) == (
        "backend:count-files",
        "frontend:count-files",
        "backend:run-migration",
        "run-integration-tests",
        "frontend:apply-patch",
        "touch-everywhere",
    )
    assert registry.names(["frontend"]) == ("frontend:count-files", "run-integration-tests", "frontend:apply-patch", "touch-everywhere")


def test_description_source_and_injected_names_come_from_the_function(
    registry: ToolRegistry, repos: dict[str, RepoContext]
) -> None:
    tools = built(registry, repos, WriteTracker())
    count = tools["backend:count-files"]
    assert count.description == "Count the repo's files."
    assert count.source.__name__ == "count_files" and count.injected == ("repo",)
    assert tools["backend:run-migration"].injected == ()
    assert tools["run-integration-tests"].injected == ("repos",)
    assert [spec.injected for spec in registry.specs if spec.name == "apply-patch"] == [("repo",)]


def test_tools_run_with_injected_repos(registry: ToolRegistry, repos: dict[str, RepoContext]) -> None:
    (repos["backend"].root / "a.py").write_text("", encoding="utf-8")
    tools = built(registry, repos, WriteTracker())
    assert tools["backend:count-files"].func(suffix=".py") == "1"
    assert tools["frontend:count-files"].func() == "0"
    assert tools["backend:run-migration"].func(steps=2, dry_run=True) == "migrated 2 step(s) (dry run)"
    assert tools["run-integration-tests"].func(tags=["smoke"]) == "ran backend,frontend with ['smoke']"


def test_modifies_files_records_the_returned_paths(registry: ToolRegistry, repos: dict[str, RepoContext]) -> None:
    tracker = WriteTracker()
    tools = built(registry, repos, tracker)
    assert tools["frontend:apply-patch"].writes_files
    result = tools["frontend:apply-patch"].func(files=["a.js", "b.js"])
    assert result == "Modified 2 file(s): frontend:a.js, frontend:b.js"
    assert tools["touch-everywhere"].func(name="MARK") == "Modified 2 file(s): backend:MARK, frontend:MARK"
    assert tracker.flush() == ["frontend:a.js", "frontend:b.js", "backend:MARK", "frontend:MARK"]


def test_modified_paths_outside_the_repo_are_refused(repos: dict[str, RepoContext]) -> None:
    registry = ToolRegistry()

    @registry.register("sneaky", repo="backend")
    @modifies_files
    def sneaky() -> list[str]:
        """Claims to have written outside."""
        return ["../frontend/x.js"]

    @registry.register("bad-shape")
    @modifies_files
    def bad_shape() -> list[str]:
        """Cross-repo tool returning bare paths."""
        return ["x.js"]

    tracker = WriteTracker()
    tools = built(registry, repos, tracker)
    assert is_tool_error(tools["backend:sneaky"].func())
    assert "repo:path" in tools["bad-shape"].func()
    assert tracker.flush() == []


def test_exceptions_become_text_for_the_model(repos: dict[str, RepoContext]) -> None:
    registry = ToolRegistry()

    @registry.register("explode")
    def explode() -> str:
        """Always fails."""
        raise KeyError("missing thing")

    @registry.register("os-fail", repo="backend")
    def os_fail(repo: RepoContext) -> str:
        """Reads a missing file."""
        return (repo.root / "nope").read_text()

    tools = built(registry, repos, WriteTracker())
    assert tools["explode"].func() == "Error: KeyError: 'missing thing'"
    assert tools["backend:os-fail"].func().startswith("Error: No such file or directory: ")
    assert is_tool_error(tools["explode"].func())


def test_duplicate_registrations_are_refused(registry: ToolRegistry) -> None:
    with pytest.raises(ToolRegistryError, match="registered twice"):
        registry.register("run-migration", repo="backend")(lambda: "x")
    with pytest.raises(ToolRegistryError, match="registered twice"):
        registry.register("count-files", repo="frontend")(lambda: "x")
    registry.register("run-migration", repo="frontend")(lambda: "x")  # another repo's tool of that name is fine


def test_bad_names(registry: ToolRegistry) -> None:
    with pytest.raises(ToolRegistryError, match="must not contain ':'"):
        registry.register("a:b")(lambda: "x")


def test_unknown_names_cannot_be_built(registry: ToolRegistry, repos: dict[str, RepoContext]) -> None:
    with pytest.raises(ToolRegistryError, match="unknown tool 'backend:apply-patch'"):
        registry.build(["backend:apply-patch"], repos, WriteTracker())


def test_safe_names_map_back_to_tools(registry: ToolRegistry, repos: dict[str, RepoContext]) -> None:
    tools = registry.build(registry.names(list(repos)), repos, WriteTracker())
    index = index_by_safe_name(tools)
    assert index["backend__run-migration"].name == "backend:run-migration"
    assert all(index[provider_safe_name(tool.name)] is tool for tool in tools)


def test_safe_name_collisions_are_refused() -> None:
    first = AgentTool("a:b", "", lambda: "")
    second = AgentTool("a__b", "", lambda: "")
    with pytest.raises(OrchestraError, match="share the provider name 'a__b'"):
        index_by_safe_name([first, second])
