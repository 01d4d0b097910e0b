"""What the path guard hands out and how it refuses (shared by `path_guard` and `lazy_walk`)."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from attrs import frozen

from orchestra_core.model.errors import OrchestraError


class ToolPathError(OrchestraError):
    """A path given to a tool would leave its repo or touch git's or Orchestra's own files; the tool refuses."""


@frozen
class GuardedPath:
    """A path resolved beneath a repo root: `relative` has no symlink, no `..`, no `.`."""

    root: Path
    relative: PurePosixPath

    @property
    def absolute(self) -> Path:
        return self.root.joinpath(*self.relative.parts)

    @property
    def text(self) -> str:
        return self.relative.as_posix()
