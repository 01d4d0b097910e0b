"""Workspace events, passed to the manager's event callback as they happen."""

from __future__ import annotations

from pathlib import Path

from attrs import field, frozen


@frozen
class SessionBranchCreated:
    """A session branch (and its worktree) was set up in a repo.

    `requested_branch` differs from `branch` when the natural name was taken and another was chosen.
    """

    session_id: str
    repo: str
    branch: str
    base_ref: str
    base_sha: str
    worktree_path: Path
    isolation: str
    requested_branch: str
    level: str = "info"


@frozen
class AgentCommitCreated:
    """A turn's writes were committed to a session branch."""

    session_id: str
    repo: str
    branch: str
    sha: str
    node_id: str
    turn_number: int
    files: tuple[str, ...] = field(converter=tuple)
    message: str = ""
    message_source: str = "generator"  # or "fallback"
    level: str = "info"


@frozen
class CommitMessageFallback:
    """The commit message generator failed or produced nothing usable; the fallback message was used."""

    session_id: str
    repo: str
    node_id: str
    turn_number: int
    reason: str
    level: str = "warning"


@frozen
class WritesNotCommitted:
    """Some of a turn's writes were left out of its commit (ignored by git, or an unknown repo)."""

    session_id: str
    repo: str
    node_id: str
    turn_number: int
    paths: tuple[str, ...] = field(converter=tuple)
    reason: str = ""
    level: str = "warning"


@frozen
class WorkspaceRestored:
    """A repo's session worktree was discarded and recreated at `sha` (rollback, restore or reopen)."""

    session_id: str
    repo: str
    branch: str
    sha: str
    reason: str
    level: str = "info"


@frozen
class ProjectLinkFailed:
    """The project could not be recorded in a repo's git config, so `orchestra show` run from that repo
    alone will not find the session (it still does from the project, or with `--config`)."""

    session_id: str
    repo: str
    reason: str
    level: str = "warning"


WorkspaceEvent = (
    SessionBranchCreated
    | AgentCommitCreated
    | CommitMessageFallback
    | WritesNotCommitted
    | WorkspaceRestored
    | ProjectLinkFailed
)
