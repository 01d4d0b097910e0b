""".worktreeinclude: the ignored files a repo lists there are copied into each new session worktree (and
parallel branch worktree), safely, and never committed (issue 17)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from orchestra_adapters.git import SubprocessGit
from orchestra_core.model.workspace_events import IncludedFilesCopied, IncludedFileSkipped
from orchestra_core.testing.clock import ManualClock
from orchestra_core.workspace import worktree_include
from orchestra_core.workspace.branches import BranchWorktrees
from orchestra_core.workspace.session import WorkspaceSession
from orchestra_core.workspace.worktree_include import copy_included_files
from tests.integration.workspace.conftest import SESSION_ID, Harness, make_turn
from tests.support.git_repos import GitRepo

FILES = {
    "app.py": "print('hi')\n",
    ".gitignore": ".env\n*.local.json\nsecrets/\nbin/\nnotes.txt\n.orchestra/\nlinks/\n",
    ".worktreeinclude": "# what agents need\n.env\n*.local.json\nsecrets/\nbin/\nlinks/\ndraft.md\n",
}


def _user_files(repo: GitRepo) -> None:
    repo.write(".env", "SECRET=1\n")
    (repo.path / ".env").chmod(0o600)
    repo.write("config/db.local.json", "{}\n")
    repo.write("secrets/deep/key.pem", "KEY\n")
    repo.write("bin/tool.sh", "#!/bin/sh\n")
    (repo.path / "bin/tool.sh").chmod(0o755)
    repo.write("notes.txt", "ignored but not listed\n")
    repo.write("draft.md", "listed but not ignored: the user's work in progress\n")


def _setup(harness: Harness) -> tuple[GitRepo, WorkspaceSession]:
    repo = harness.repo("project", FILES)
    _user_files(repo)
    return repo, harness.manager().setup_session(SESSION_ID, "include")


def test_listed_ignored_files_are_copied_with_their_modes(harness: Harness) -> None:
    repo, session = _setup(harness)
    worktree = session.contexts["project"].worktree_path
    for path in (".env", "config/db.local.json", "secrets/deep/key.pem", "bin/tool.sh"):
        assert (worktree / path).read_bytes() == (repo.path / path).read_bytes(), path
        assert stat.S_IMODE((worktree / path).stat().st_mode) == stat.S_IMODE((repo.path / path).stat().st_mode)
    assert stat.S_IMODE((worktree / ".env").stat().st_mode) == 0o600
    assert stat.S_IMODE((worktree / "bin/tool.sh").stat().st_mode) == 0o755
    assert not (worktree / "notes.txt").exists()  # ignored, but not listed
    assert not (worktree / "draft.md").exists()  # listed, but not ignored
    [copied] = harness.events_of(IncludedFilesCopied)
    assert sorted(copied.paths) == [".env", "bin/tool.sh", "config/db.local.json", "secrets/deep/key.pem"]
    assert harness.events_of(IncludedFileSkipped) == []


def test_copied_files_are_never_committed_by_a_turn(harness: Harness) -> None:
    repo, session = _setup(harness)
    worktree = session.contexts["project"].worktree_path
    (worktree / "feature.py").write_text("x = 1\n")
    (worktree / ".env").write_text("SECRET=changed\n")
    committed = session.commit_turn(make_turn(["project:feature.py", "project:.env"]))
    [commit] = committed.commits
    assert repo.git("show", "--name-only", "--format=", commit.sha).split() == ["feature.py"]
    branch = session.contexts["project"].branch_name
    assert ".env" not in repo.files_in(branch) and "secrets/deep/key.pem" not in repo.files_in(branch)
    assert repo.status(worktree) == ""  # the copies are ignored: nothing left to commit either


def test_a_link_inside_the_repo_is_copied_and_one_leading_out_is_skipped(harness: Harness, tmp_path: Path) -> None:
    repo = harness.repo("project", FILES)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "id_rsa").write_text("PRIVATE\n")
    repo.write("secrets/real.key", "K\n")
    (repo.path / "links").mkdir()
    os.symlink("../secrets/real.key", repo.path / "links/inside.key")
    os.symlink(outside / "id_rsa", repo.path / "links/outside.key")
    os.symlink(outside, repo.path / "links/outdir")
    os.symlink(repo.path / ".git" / "config", repo.path / "links/gitconfig")
    worktree = harness.manager().setup_session(SESSION_ID, "include").contexts["project"].worktree_path
    link = worktree / "links/inside.key"
    assert link.is_symlink() and link.read_text() == "K\n" and link.resolve() == (worktree / "secrets/real.key")
    for name in ("outside.key", "outdir", "gitconfig"):
        assert not os.path.lexists(worktree / "links" / name), name
    skipped = sorted(event.path for event in harness.events_of(IncludedFileSkipped))
    assert skipped == ["links/gitconfig", "links/outdir", "links/outside.key"]
    assert all(e.level == "warning" and "outside the repository" in e.reason for e in harness.events_of(IncludedFileSkipped))


def test_nothing_of_git_or_the_state_dir_is_ever_copied(harness: Harness) -> None:
    repo = harness.repo("project", {**FILES, ".worktreeinclude": "*\n.git/\n.orchestra/\n"})
    repo.write(".env", "SECRET=1\n")
    repo.write(".orchestra/orchestra.db", "store\n")
    worktree = harness.manager().setup_session(SESSION_ID, "include").contexts["project"].worktree_path
    assert (worktree / ".env").exists()
    assert not (worktree / ".orchestra").exists()
    assert (worktree / ".git").is_file()  # the worktree's own link file, not a copy of the repository's
    assert harness.events_of(IncludedFileSkipped) == []  # Orchestra's own files are not the user's concern


def test_a_file_over_the_size_limit_is_skipped_with_a_warning(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(worktree_include, "MAX_INCLUDED_BYTES", 100)
    repo = harness.repo("project", FILES)
    repo.write(".env", "x" * 101)
    repo.write("config/small.local.json", "{}\n")
    worktree = harness.manager().setup_session(SESSION_ID, "include").contexts["project"].worktree_path
    assert not (worktree / ".env").exists() and (worktree / "config/small.local.json").exists()
    [event] = harness.events_of(IncludedFileSkipped)
    assert event.path == ".env" and "larger than" in event.reason and event.level == "warning"


def test_without_the_file_or_with_a_link_for_it_nothing_is_copied(harness: Harness, tmp_path: Path) -> None:
    repo = harness.repo("project", {k: v for k, v in FILES.items() if k != ".worktreeinclude"})
    repo.write(".env", "SECRET=1\n")
    rules = tmp_path / "rules"
    rules.write_text(".env\n")
    os.symlink(rules, repo.path / ".worktreeinclude")
    copied = copy_included_files(SubprocessGit(), repo.path, tmp_path / "target", harness.events.append)
    assert copied == [] and harness.events == []
    (repo.path / ".worktreeinclude").unlink()
    assert copy_included_files(SubprocessGit(), repo.path, tmp_path / "target", harness.events.append) == []


def test_parallel_branch_worktrees_get_the_files_too(harness: Harness) -> None:
    _, session = _setup(harness)
    manager = harness.manager()
    branches = BranchWorktrees(
        session, SubprocessGit(), ManualClock(), manager.worktrees_dir(SESSION_ID), "include", harness.events.append
    )
    branches.fork("fan", None, ["fan:left"])
    worktree = branches.worktree_path("fan:left", "project")
    assert (worktree / ".env").read_text() == "SECRET=1\n"
    assert (worktree / "secrets/deep/key.pem").read_text() == "KEY\n"


def test_a_directory_linked_out_of_the_worktree_gets_nothing_not_even_a_directory(
    harness: Harness, tmp_path: Path
) -> None:
    repo = harness.repo("project", {**FILES, ".gitignore": "cfg/\n", ".worktreeinclude": "cfg/\n"})
    repo.write("cfg/sub/app.env", "SECRET=1\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    worktree = tmp_path / "worktree"
    worktree.mkdir()
    os.symlink(outside, worktree / "cfg")  # as a session branch that turned cfg into a link would check out
    assert copy_included_files(SubprocessGit(), repo.path, worktree, harness.events.append) == []
    assert list(outside.iterdir()) == []
    [event] = harness.events_of(IncludedFileSkipped)
    assert event.path == "cfg/sub/app.env" and "outside" in event.reason
