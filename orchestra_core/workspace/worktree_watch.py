"""WorktreeWatch: which files in a run's worktrees changed since a baseline, whoever changed them.

The safety net for agents whose own tools write behind Orchestra's back (a CLI agent's native tools, a
shell redirect): what no tool reported is found here and committed apart, never lost and never mixed into
a tracked turn.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from orchestra_core.ports.git import Git

# A file's stat signature: (size, mtime_ns, ctime_ns, inode, mode); None when it does not exist.
Signature = tuple[int, int, int, int, int] | None


class WorktreeWatch:
    """A baseline of the dirty and untracked files of some worktrees, and what changed since.

    Only what `git status` lists counts (tracked changes and untracked files, one by one; never what git
    ignores). A path counts as changed when it is dirty now and its signature (size, times, inode, mode,
    or its absence) differs from the baseline's: new dirt, dirt that was there and was touched again, and
    deletions of tracked files.

    Args:
        git: The git port.
        roots: Each repo's name and the worktree to watch (a run's session worktrees).

    Raises:
        GitError: `git status` failed in a root (at construction, `changed` and `rebaseline`).
    """

    def __init__(self, git: Git, roots: Mapping[str, Path]) -> None:
        self._git = git
        self._roots = dict(roots)
        self._baseline: dict[str, dict[str, Signature]] = self._snapshot()

    @property
    def roots(self) -> Mapping[str, Path]:
        """The watched worktrees by repo name."""
        return dict(self._roots)

    def changed(self) -> list[str]:
        """`repo:path` of every file dirty now and not as it was at the baseline, by repo then path."""
        found: list[str] = []
        for repo, now in self._snapshot().items():
            before = self._baseline.get(repo, {})
            found += [f"{repo}:{path}" for path, signature in now.items() if before.get(path, _ABSENT) != signature]
        return found

    def rebaseline(self) -> None:
        """Take the current state as the new baseline (after the changes found were committed)."""
        self._baseline = self._snapshot()

    def _snapshot(self) -> dict[str, dict[str, Signature]]:
        return {repo: self._dirty(root) for repo, root in self._roots.items()}

    def _dirty(self, root: Path) -> dict[str, Signature]:
        paths: set[str] = set()
        for entry in self._git.status(root, untracked=True):
            if entry.index == "!":
                continue
            paths.add(entry.path)
            if entry.original_path:
                paths.add(entry.original_path)
        return {path: _signature(root / path) for path in sorted(paths)}


_ABSENT = object()  # not in the baseline at all (unlike None: in it, and missing then)


def _signature(path: Path) -> Signature:
    try:
        stat = os.lstat(path)
    except OSError:  # gone (a deletion), or unreadable: either way "missing" for comparison
        return None
    return (stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino, stat.st_mode)
