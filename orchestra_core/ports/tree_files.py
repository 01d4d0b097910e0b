"""TreeFiles port: the tracked files of a lazy worktree that are not written out, read from git's objects."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol, runtime_checkable

from attrs import frozen

REGULAR = "100644"
EXECUTABLE = "100755"
SYMLINK = "120000"
GITLINK = "160000"


@frozen
class TreeEntry:
    """One tracked path of a worktree's index.

    Attributes:
        path: Repo-relative path (`/`-separated).
        mode: git's mode: `100644`, `100755`, `120000` (a symbolic link) or `160000` (a submodule).
        object_id: The blob (or commit, for a submodule) it holds.
    """

    path: str
    mode: str
    object_id: str

    @property
    def is_file(self) -> bool:
        return self.mode in (REGULAR, EXECUTABLE)

    @property
    def is_symlink(self) -> bool:
        return self.mode == SYMLINK


@runtime_checkable
class TreeFiles(Protocol):
    """The tracked content of a lazy worktree (`Git.worktree_add_lazy`): what a full checkout would have written,
    for the paths not written out. What is on disk always wins; these answer for what is not. Thread-safe."""

    def entry(self, path: str) -> TreeEntry | None:
        """The index entry at repo-relative `path`, or None when nothing is tracked there."""
        ...

    def is_directory(self, path: str) -> bool:
        """Whether tracked paths lie below repo-relative `path` ("" or "." is the top)."""
        ...

    def entries_under(self, directory: str) -> Iterator[TreeEntry]:
        """Every entry below repo-relative `directory` ("" or "." for all), in path order."""
        ...

    def read(self, entry: TreeEntry) -> bytes:
        """The blob `entry` holds, as `git show` prints it (a symbolic link's target for a link).

        Raises:
            GitError: git could not read the object.
        """
        ...

    def close(self) -> None:
        """Stop any process kept to read objects (reading again restarts it)."""
        ...
