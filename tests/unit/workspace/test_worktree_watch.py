"""WorktreeWatch: files changed since the baseline in real git repositories and in the in-memory Git."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from orchestra_adapters.git.subprocess_git import SubprocessGit
from orchestra_core.ports.git import Git
from orchestra_core.testing.git import InMemoryGit
from orchestra_core.workspace.worktree_watch import WorktreeWatch
from tests.support.git_repos import git, make_repo

MakeRepo = Callable[[Path, Mapping[str, str]], Path]


@pytest.fixture(params=["subprocess", "memory"])
def kit(request: pytest.FixtureRequest) -> tuple[Git, MakeRepo]:
    if request.param == "subprocess":
        return SubprocessGit(), lambda path, files: make_repo(path, files).path
    memory = InMemoryGit()
    return memory, lambda path, files: memory.init_repository(path, files)


def _touch_again(path: Path, text: str) -> None:
    """Rewrite with a visibly different mtime (same-size rewrites within a clock tick are not told apart)."""
    before = os.lstat(path).st_mtime_ns
    path.write_text(text)
    os.utime(path, ns=(before + 2_000_000_000, before + 2_000_000_000))


def test_a_clean_tree_has_nothing_changed_until_files_are_written(kit: tuple[Git, MakeRepo], tmp_path: Path) -> None:
    port, make = kit
    root = make(tmp_path / "app", {"README.md": "hi\n", "src/a.py": "a\n"})
    watch = WorktreeWatch(port, {"app": root})
    assert watch.changed() == []
    (root / "src" / "a.py").write_text("changed\n")
    (root / "new").mkdir()
    (root / "new" / "deep").mkdir()
    (root / "new" / "deep" / "b.txt").write_text("b\n")
    (root / "README.md").unlink()
    assert watch.changed() == ["app:README.md", "app:new/deep/b.txt", "app:src/a.py"]


def test_baseline_dirt_counts_only_when_touched_again(kit: tuple[Git, MakeRepo], tmp_path: Path) -> None:
    port, make = kit
    root = make(tmp_path / "app", {"a.py": "a\n", "b.py": "b\n"})
    (root / "a.py").write_text("user's edit\n")
    (root / "scratch.txt").write_text("user's notes\n")
    watch = WorktreeWatch(port, {"app": root})
    assert watch.changed() == []
    _touch_again(root / "scratch.txt", "the agent's notes\n")
    (root / "b.py").write_text("agent\n")
    assert watch.changed() == ["app:b.py", "app:scratch.txt"]
    (root / "a.py").unlink()
    assert watch.changed() == ["app:a.py", "app:b.py", "app:scratch.txt"]


def test_rebaseline_forgets_what_was_found(kit: tuple[Git, MakeRepo], tmp_path: Path) -> None:
    port, make = kit
    root = make(tmp_path / "app", {"a.py": "a\n"})
    watch = WorktreeWatch(port, {"app": root})
    (root / "out.txt").write_text("x\n")
    assert watch.changed() == ["app:out.txt"]
    watch.rebaseline()
    assert watch.changed() == []
    _touch_again(root / "out.txt", "y\n")
    assert watch.changed() == ["app:out.txt"]


def test_ignored_files_never_count(kit: tuple[Git, MakeRepo], tmp_path: Path) -> None:
    port, make = kit
    root = make(tmp_path / "app", {".gitignore": "*.log\nbuild/\n", "a.py": "a\n"})
    watch = WorktreeWatch(port, {"app": root})
    (root / "debug.log").write_text("noise\n")
    (root / "build").mkdir()
    (root / "build" / "out.o").write_text("bin\n")
    assert watch.changed() == []


def test_several_repos_in_the_order_given(kit: tuple[Git, MakeRepo], tmp_path: Path) -> None:
    port, make = kit
    web = make(tmp_path / "web", {"x": "x\n"})
    api = make(tmp_path / "api", {"y": "y\n"})
    watch = WorktreeWatch(port, {"web": web, "api": api})
    (api / "z").write_text("z\n")
    (web / "w").write_text("w\n")
    assert watch.changed() == ["web:w", "api:z"]
    assert list(watch.roots) == ["web", "api"]


def test_a_staged_rename_names_both_paths(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app", {"old.py": "code\n"})
    watch = WorktreeWatch(SubprocessGit(), {"app": repo.path})
    git(repo.path, "mv", "old.py", "new.py")
    assert watch.changed() == ["app:new.py", "app:old.py"]
