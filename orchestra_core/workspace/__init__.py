"""Git workspace: session branches in managed worktrees, per-turn commits, snapshots and rollback.

Names are imported on first use (PEP 562), so importing one submodule does not load them all.
"""

from __future__ import annotations

from orchestra_core.model.lazy_exports import lazy_exports

_EXPORTS = {
    "AgentCommitCreated": "orchestra_core.model.workspace_events",
    "CommitMessageFallback": "orchestra_core.model.workspace_events",
    "ProtectedBranchError": "orchestra_core.workspace.errors",
    "SessionBranchCreated": "orchestra_core.model.workspace_events",
    "SessionRolledBack": "orchestra_core.model.workspace_events",
    "UncommittedWorkSaved": "orchestra_core.model.workspace_events",
    "UntrackedWritesCommitted": "orchestra_core.model.workspace_events",
    "WorkspaceCommitError": "orchestra_core.workspace.errors",
    "WorkspaceConfigError": "orchestra_core.workspace.errors",
    "WorkspaceContext": "orchestra_core.workspace.context",
    "WorkspaceError": "orchestra_core.workspace.errors",
    "WorkspaceEvent": "orchestra_core.model.workspace_events",
    "WorkspaceManager": "orchestra_core.workspace.manager",
    "WorkspaceRestored": "orchestra_core.model.workspace_events",
    "WorkspaceSession": "orchestra_core.workspace.session",
    "WorkspaceSnapshotRecorded": "orchestra_core.model.workspace_events",
    "WritesNotCommitted": "orchestra_core.model.workspace_events",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
