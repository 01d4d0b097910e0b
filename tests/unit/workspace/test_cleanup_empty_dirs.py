"""orchestra cleanup removes the empty directories left under .orchestra/worktrees, never those inside a
worktree (a running or kept session's files)."""

from __future__ import annotations

from pathlib import Path

from orchestra_core.workspace.cleanup_apply import _remove_empty_dirs


def test_empty_session_directories_go_and_a_worktree_keeps_its_empty_directories(tmp_path: Path) -> None:
    top = tmp_path / "worktrees"
    (top / "1" / "fan" / "left").mkdir(parents=True)  # what a removed session and its branches left
    worktree = top / "2" / "project"
    (worktree / "build" / "out").mkdir(parents=True)  # an agent's empty directory in a running session
    (worktree / ".git").write_text("gitdir: /elsewhere\n")
    _remove_empty_dirs(top)
    assert not (top / "1").exists()
    assert (worktree / "build" / "out").is_dir() and top.is_dir()
