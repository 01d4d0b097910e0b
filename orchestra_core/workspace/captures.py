"""Each write a tool records, stored as a blob in its repository at once: the WriteTracker's capture."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from orchestra_core.model.turn import FileVersion
from orchestra_core.ports.git import Git


class WorktreeCapture:
    """Captures files of a run's worktrees (`roots`, by repo name) through the Git port.

    A repo with no worktree here gives no version (the commit reads the file when it is made).
    """

    def __init__(self, git: Git, roots: Mapping[str, Path]) -> None:
        self._git = git
        self._roots = dict(roots)

    def __call__(self, repo: str, path: str) -> FileVersion | None:
        root = self._roots.get(repo)
        if root is None:
            return None
        return self._git.capture_files(root, [path]).get(path)
