"""Errors of the workspace layer; each names the repo (and the orchestra.yaml key) at fault."""

from __future__ import annotations

from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.turn import AgentTurn


class WorkspaceError(OrchestraError):
    """The git workspace cannot do what was asked (setup, commit, rollback)."""


class WorkspaceConfigError(WorkspaceError):
    """`workspace.repos` entries are unusable; raised before anything is created.

    Attributes:
        problems: (orchestra.yaml key, detail) pairs, e.g. (`workspace.repos.backend.base_ref`, ...);
            the message has one `key: detail` line per problem.
    """

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        self.problems = tuple(problems)
        super().__init__("\n".join(f"{key}: {detail}" for key, detail in self.problems))

    @property
    def key(self) -> str:
        return self.problems[0][0]


class ProtectedBranchError(WorkspaceError):
    """A commit or session branch would land on a protected branch; Orchestra never does that."""


class WorkspaceCommitError(WorkspaceError):
    """A turn's changes could not be committed; the files stay in the worktree.

    Attributes:
        turn: The turn with the commits that did succeed (other repos), when known.
    """

    def __init__(self, message: str, turn: AgentTurn | None = None) -> None:
        super().__init__(message)
        self.turn = turn
