"""Where Orchestra keeps its state in a project: the `.orchestra/` directory and what lives in it."""

from __future__ import annotations

from pathlib import Path

from attrs import frozen

STATE_DIR = ".orchestra"
"""The state directory's name, at the project root (and `~/.orchestra` for user-wide configuration)."""


@frozen
class ProjectLayout:
    """The paths of a project's state directory, `<root>/.orchestra/`.

    Attributes:
        root: The project root (the directory holding `orchestra.yaml` or `.orchestra/`).
    """

    root: Path

    @property
    def state_dir(self) -> Path:
        return self.root / STATE_DIR

    @property
    def store_path(self) -> Path:
        """The embedded SQLite session store (the default `storage.path`)."""
        return self.state_dir / "orchestra.db"

    @property
    def agents_db(self) -> Path:
        """The LangGraph agent state database."""
        return self.state_dir / "agents.db"

    @property
    def runs_dir(self) -> Path:
        return self.state_dir / "runs"

    def run_dir(self, session_id: str) -> Path:
        """A session's default run directory (logs root)."""
        return self.runs_dir / session_id

    @property
    def locks_dir(self) -> Path:
        """Session locks (one runner per session)."""
        return self.state_dir / "locks"

    @property
    def worktrees_dir(self) -> Path:
        """Managed worktrees, `worktrees/<session>/<repo>`."""
        return self.state_dir / "worktrees"
