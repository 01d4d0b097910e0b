"""Built-in per-repo tools as the model calls them: behaviour, bounds, write tracking, refused paths."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from orchestra_core.agents import builtin_tools
from orchestra_core.agents.repo_context import RepoContext
from orchestra_core.agents.tools import AgentTool, WriteTracker, is_tool_error
from orchestra_core.agents.toolset import build_tools, create_registry
from orchestra_core.model.settings import OrchestraSettings

NAMES = [f"{repo}:{tool}" for repo in ("app", "lib") for tool in builtin_tools.BUILTIN_TOOL_NAMES]


@pytest.fixture
def repos(tmp_path: Path) -> dict[str, RepoContext]:
    app, lib = tmp_path / "app", tmp_path / "lib"
    for root in (app, lib):
        (root / ".git").mkdir(parents=True)
        (root / ".git" / "config").write_text("[core]\n", encoding="utf-8")
    (app / "src").mkdir()
    (app / "src" / "main.py").write_text("def main():\n    print('hi')\n\n\ndef helper():\n    return 1\n", encoding="utf-8")
    (app / "README.md").write_text("# App\nUses main.\n", encoding="utf-8")
    (lib / "lib.py").write_text("VALUE = 1\n", encoding="utf-8")
    return {"app": RepoContext("app", app), "lib": RepoContext("lib", lib)}


@pytest.fixture
def tracker() -> WriteTracker:
    return WriteTracker()


@pytest.fixture
def tools(repos: dict[str, RepoContext], tracker: WriteTracker) -> dict[str, AgentTool]:
    built = build_tools(create_registry(OrchestraSettings()), NAMES, repos, tracker)
    return {tool.name: tool for tool in built}


def call(tools: dict[str, AgentTool], name: str, **arguments: object) -> str:
    return tools[name].func(**arguments)


def test_tools_are_generated_per_repo_with_safe_names(tools: dict[str, AgentTool]) -> None:
    assert list(tools) == NAMES
    assert tools["app:read-file"].safe_name == "app__read-file"
    assert tools["lib:write-file"].writes_files and tools["app:edit-file"].writes_files
    assert not tools["app:read-file"].writes_files


def test_read_resolves_relative_to_its_repo(tools: dict[str, AgentTool]) -> None:
    assert call(tools, "app:read-file", path="src/main.py").startswith("def main():")
    assert call(tools, "lib:read-file", path="lib.py") == "VALUE = 1\n"
    assert is_tool_error(call(tools, "lib:read-file", path="src/main.py"))


def test_read_a_line_range(tools: dict[str, AgentTool]) -> None:
    assert call(tools, "app:read-file", path="src/main.py", start_line=2, end_line=2) == "    print('hi')\n"
    assert call(tools, "app:read-file", path="src/main.py", start_line=5) == "def helper():\n    return 1\n"
    result = call(tools, "app:read-file", path="src/main.py", start_line=50)
    assert is_tool_error(result) and "has 6 lines" in result


def test_read_refuses_binary_and_directories(repos: dict[str, RepoContext], tools: dict[str, AgentTool]) -> None:
    (repos["app"].root / "logo.png").write_bytes(b"\x89PNG\x00\x00data")
    assert "binary file" in call(tools, "app:read-file", path="logo.png")
    assert "is a directory" in call(tools, "app:read-file", path="src")
    assert "no such file: nope.txt" in call(tools, "app:read-file", path="nope.txt")


def test_read_is_capped(repos: dict[str, RepoContext], tools: dict[str, AgentTool], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(builtin_tools, "MAX_READ_BYTES", 100)
    (repos["app"].root / "big.txt").write_text("".join(f"line {i:03}\n" for i in range(100)), encoding="utf-8")
    result = call(tools, "app:read-file", path="big.txt")
    assert result.startswith("line 000\n")
    assert "[truncated: big.txt has 900 bytes; showing the first 11 lines." in result
    assert len(result) < 250


def test_write_creates_records_and_overwrites(repos: dict[str, RepoContext], tools: dict[str, AgentTool], tracker: WriteTracker) -> None:
    assert call(tools, "app:write-file", path="pkg/new.py", content="X = 1\n") == "Wrote 6 bytes to pkg/new.py"
    assert (repos["app"].root / "pkg" / "new.py").read_text(encoding="utf-8") == "X = 1\n"
    call(tools, "lib:write-file", path="lib.py", content="VALUE = 2\n")
    call(tools, "app:write-file", path="pkg/new.py", content="X = 2\n")
    assert tracker.flush() == ["app:pkg/new.py", "lib:lib.py"]
    assert tracker.flush() == []


def test_write_keeps_content_exactly(repos: dict[str, RepoContext], tools: dict[str, AgentTool]) -> None:
    call(tools, "app:write-file", path="crlf.txt", content="a\r\nb\r\n")
    assert (repos["app"].root / "crlf.txt").read_bytes() == b"a\r\nb\r\n"


def test_write_through_an_inner_symlink_records_the_target(
    repos: dict[str, RepoContext], tools: dict[str, AgentTool], tracker: WriteTracker
) -> None:
    os.symlink("src/main.py", repos["app"].root / "link.py")
    call(tools, "app:write-file", path="link.py", content="print('changed')\n")
    assert tracker.flush() == ["app:src/main.py"]


def test_edit_replaces_a_unique_match(repos: dict[str, RepoContext], tools: dict[str, AgentTool], tracker: WriteTracker) -> None:
    result = call(tools, "app:edit-file", path="src/main.py", old_text="print('hi')", new_text="print('hello')")
    assert result == "Replaced 1 occurrence(s) in src/main.py"
    assert "print('hello')" in (repos["app"].root / "src" / "main.py").read_text(encoding="utf-8")
    assert tracker.flush() == ["app:src/main.py"]


def test_edit_requires_a_match_and_uniqueness(repos: dict[str, RepoContext], tools: dict[str, AgentTool], tracker: WriteTracker) -> None:
    original = (repos["app"].root / "src" / "main.py").read_text(encoding="utf-8")
    missing = call(tools, "app:edit-file", path="src/main.py", old_text="print('bye')", new_text="x")
    assert is_tool_error(missing) and "was not found in src/main.py" in missing
    ambiguous = call(tools, "app:edit-file", path="src/main.py", old_text="def ", new_text="async def ")
    assert is_tool_error(ambiguous) and "occurs 2 times" in ambiguous
    empty = call(tools, "app:edit-file", path="src/main.py", old_text="", new_text="x")
    assert is_tool_error(empty)
    assert (repos["app"].root / "src" / "main.py").read_text(encoding="utf-8") == original
    assert tracker.flush() == []


def test_edit_replace_all(repos: dict[str, RepoContext], tools: dict[str, AgentTool]) -> None:
    result = call(tools, "app:edit-file", path="src/main.py", old_text="def ", new_text="async def ", replace_all=True)
    assert result == "Replaced 2 occurrence(s) in src/main.py"
    assert (repos["app"].root / "src" / "main.py").read_text(encoding="utf-8").count("async def") == 2


def test_search_regex_and_literal(tools: dict[str, AgentTool]) -> None:
    assert call(tools, "app:search-code", pattern=r"def \w+\(") == "src/main.py:1: def main():\nsrc/main.py:5: def helper():"
    assert call(tools, "app:search-code", pattern="main(", literal=True) == "src/main.py:1: def main():"
    assert call(tools, "app:search-code", pattern="USES", ignore_case=True) == "README.md:2: Uses main."
    assert call(tools, "app:search-code", pattern="main", glob="*.md") == "README.md:2: Uses main."
    assert call(tools, "app:search-code", pattern="zzz") == "No matches for 'zzz'."
    assert "invalid regular expression" in call(tools, "app:search-code", pattern="(")


def test_search_skips_git_state_and_binary_files(repos: dict[str, RepoContext], tools: dict[str, AgentTool]) -> None:
    root = repos["app"].root
    (root / ".git" / "HEAD").write_text("needle\n", encoding="utf-8")
    (root / ".orchestra").mkdir()
    (root / ".orchestra" / "runs.txt").write_text("needle\n", encoding="utf-8")
    (root / "blob.bin").write_bytes(b"needle\x00\x01")
    (root / "found.txt").write_text("a needle here\n", encoding="utf-8")
    assert call(tools, "app:search-code", pattern="needle") == "found.txt:1: a needle here"


def test_search_output_is_bounded(repos: dict[str, RepoContext], tools: dict[str, AgentTool]) -> None:
    (repos["app"].root / "many.txt").write_text("hit " + "x" * 1000 + "\n" + "hit\n" * 50, encoding="utf-8")
    result = call(tools, "app:search-code", pattern="hit", max_results=5)
    lines = result.splitlines()
    assert len(lines) == 6
    assert lines[-1] == "[stopped after 5 matches; narrow the pattern or path]"
    assert len(lines[0]) < 400


def test_list_files(repos: dict[str, RepoContext], tools: dict[str, AgentTool]) -> None:
    (repos["app"].root / "src" / "util.py").write_text("", encoding="utf-8")
    assert call(tools, "app:list-files") == "README.md\nsrc/main.py\nsrc/util.py"
    assert call(tools, "app:list-files", pattern="*.py") == "src/main.py\nsrc/util.py"
    assert call(tools, "app:list-files", pattern="src/u*") == "src/util.py"
    assert call(tools, "app:list-files", path="src", max_results=1) == "src/main.py\n[stopped after 1 files; narrow the pattern or path]"
    assert call(tools, "app:list-files", pattern="*.rs") == "No files match '*.rs' under .."


def test_listing_and_search_skip_symlinks_out_of_the_repo(repos: dict[str, RepoContext], tools: dict[str, AgentTool], tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("needle\n", encoding="utf-8")
    os.symlink(outside, repos["app"].root / "escape")
    os.symlink(outside / "secret.txt", repos["app"].root / "secret-link.txt")
    assert "secret" not in call(tools, "app:list-files")
    assert call(tools, "app:search-code", pattern="needle") == "No matches for 'needle'."


ESCAPES = [
    pytest.param("../lib/lib.py", "contains '..'", id="dotdot"),
    pytest.param("src/../../lib/lib.py", "contains '..'", id="nested-dotdot"),
    pytest.param("/etc/passwd", "is absolute", id="absolute"),
    pytest.param("~/notes.txt", "is absolute", id="home"),
    pytest.param(".git/config", "inside .git", id="git-dir"),
    pytest.param("sub/.git/config", "inside .git", id="nested-git"),
    pytest.param(".orchestra/store.db", "inside .orchestra", id="state-dir"),
    pytest.param("escape/secret.txt", "through a symlink", id="symlinked-dir"),
    pytest.param("secret-link.txt", "through a symlink", id="symlinked-file"),
    pytest.param("", "a path is required", id="empty"),
]


@pytest.mark.parametrize(("path", "reason"), ESCAPES)
@pytest.mark.parametrize("tool", ["read-file", "write-file", "edit-file", "search-code", "list-files"])
def test_paths_that_leave_the_repo_are_refused(
    repos: dict[str, RepoContext], tools: dict[str, AgentTool], tracker: WriteTracker, tmp_path: Path, tool: str, path: str, reason: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n", encoding="utf-8")
    os.symlink(outside, repos["app"].root / "escape")
    os.symlink(outside / "secret.txt", repos["app"].root / "secret-link.txt")
    arguments = {
        "read-file": {"path": path},
        "write-file": {"path": path, "content": "pwned"},
        "edit-file": {"path": path, "old_text": "secret", "new_text": "pwned"},
        "search-code": {"pattern": "secret", "path": path},
        "list-files": {"path": path},
    }[tool]
    result = call(tools, f"app:{tool}", **arguments)
    assert is_tool_error(result)
    assert reason in result
    assert (outside / "secret.txt").read_text(encoding="utf-8") == "secret\n"
    assert tracker.flush() == []
