"""Git workspace: session branches in managed worktrees, per-turn commits, snapshots and rollback."""

from orchestra_core.workspace.context import WorkspaceContext
from orchestra_core.workspace.errors import (
    ProtectedBranchError,
    WorkspaceCommitError,
    WorkspaceConfigError,
    WorkspaceError,
)
from orchestra_core.workspace.events import (
    AgentCommitCreated,
    CommitMessageFallback,
    SessionBranchCreated,
    WorkspaceEvent,
    WorkspaceRestored,
    WritesNotCommitted,
)
from orchestra_core.workspace.manager import WorkspaceManager
from orchestra_core.workspace.session import WorkspaceSession

__all__ = [
    "AgentCommitCreated",
    "CommitMessageFallback",
    "ProtectedBranchError",
    "SessionBranchCreated",
    "WorkspaceCommitError",
    "WorkspaceConfigError",
    "WorkspaceContext",
    "WorkspaceError",
    "WorkspaceEvent",
    "WorkspaceManager",
    "WorkspaceRestored",
    "WorkspaceSession",
    "WritesNotCommitted",
]
