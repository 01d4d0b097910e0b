"""RepoContext: the repo a repo-scoped tool works in, and the one safe way to turn its paths into files."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from attrs import evolve, field, frozen

from orchestra_core.model.errors import OrchestraError


class ToolPathError(OrchestraError):
    """A path given to a tool would leave its repo (or touch `.git`); the tool refuses it."""


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
    """

    name: str
    root: Path = field(converter=_resolved)
    repo_root: Path | None = None
    branch: str = ""
    base_sha: str = ""
    head_sha: str = ""

    def with_head(self, sha: str) -> RepoContext:
        return evolve(self, head_sha=sha)

    def resolve_path(self, path: str) -> Path:
        """The absolute file for a repo-relative path, refusing anything that escapes the repo.

        Refused: empty paths, absolute paths, `~`, `..` components, `.git` components, NUL bytes, and
        paths that leave the repo through a symlink.

        Raises:
            ToolPathError: The path is refused; the message says why.
        """
        relative = self.relative_path(path)
        candidate = self.root.joinpath(*relative.parts) if relative.parts else self.root
        resolved = Path(os.path.realpath(candidate))
        if resolved != self.root and not resolved.is_relative_to(self.root):
            raise ToolPathError(f"{path!r} leaves the {self.name} repo through a symlink")
        return candidate

    def relative_path(self, path: str) -> PurePosixPath:
        """Validate and normalise a repo-relative path (without touching the filesystem).

        Raises:
            ToolPathError: The path is refused.
        """
        if not isinstance(path, str) or not path.strip():
            raise ToolPathError("a path is required")
        if "\x00" in path:
            raise ToolPathError(f"{path!r} contains a NUL byte")
        text = path.strip().replace("\\", "/")
        if text.startswith(("/", "~")) or (len(text) > 1 and text[1] == ":"):
            raise ToolPathError(f"{path!r} is absolute; give a path relative to the {self.name} repo root")
        parts = [part for part in PurePosixPath(text).parts if part not in ("", ".")]
        if ".." in parts:
            raise ToolPathError(f"{path!r} contains '..'; paths must stay inside the {self.name} repo")
        if ".git" in parts:
            raise ToolPathError(f"{path!r} is inside .git; tools may not touch git's own files")
        return PurePosixPath(*parts) if parts else PurePosixPath(".")
