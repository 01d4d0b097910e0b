"""RepoContext: the repo a repo-scoped tool works in, and the one safe way to turn its paths into files."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from attrs import evolve, field, frozen

from orchestra_core.agents.path_guard import PathGuard
from orchestra_core.ports.tree_files import TreeFiles


def _resolved(path: str | os.PathLike[str]) -> Path:
    return Path(path).resolve()


@frozen
class RepoContext:
    """Where a repo's tools operate.

    Attributes:
        name: The repo's name in orchestra.yaml (`backend` in `backend:read-file`).
        root: The directory tools read and write: the session worktree when there is one.
        repo_root: The user's repository the worktree belongs to (same as root when working in place).
        branch: The session branch checked out in `root` ("" when not a git workspace).
        base_sha: The commit the session branch started from.
        head_sha: The session branch's head when this context was made.
        protected: Directories of Orchestra's own state (the project's `.orchestra/`, the run directory) that
            the guard refuses wherever they lie inside `root`.
        tree_files: In a lazy worktree (a parallel branch's), the tracked files not written out, which the guard
            reads from git's objects; None in a full checkout.
    """

    name: str
    root: Path = field(converter=_resolved)
    repo_root: Path | None = None
    branch: str = ""
    base_sha: str = ""
    head_sha: str = ""
    protected: tuple[Path, ...] = ()
    tree_files: TreeFiles | None = field(default=None, eq=False, repr=False)

    def with_head(self, sha: str) -> RepoContext:
        return evolve(self, head_sha=sha)

    @property
    def guard(self) -> PathGuard:
        """The path guard of this repo (every path a tool is given goes through it)."""
        return PathGuard(self.root, self.name, self.protected, self.tree_files)

    def resolve_path(self, path: str) -> Path:
        """The absolute file for a repo-relative path, every symlink resolved beneath the repo.

        Refused: empty and absolute paths, `~`, `..`, NUL bytes and line breaks, names git treats as `.git`
        (any case, trailing dots or spaces, `git~1`), `.orchestra` at any depth, the `protected` directories,
        and paths that leave the repo or reach those through a symlink. Read and write files through `guard` to close the race between
        this check and the use of the path.

        Raises:
            ToolPathError: The path is refused; the message says why.
        """
        return self.guard.resolve(path).absolute

    def relative_path(self, path: str) -> PurePosixPath:
        """Validate and normalise a repo-relative path as text (without touching the filesystem).

        Raises:
            ToolPathError: The path is refused.
        """
        return self.guard.relative(path)
