"""Workspace event turns (seeds 000 and 001): branches, per-turn commits, worktrees, merges, snapshots."""

from __future__ import annotations

from attrs import field, frozen

from orchestra_core.model.records import WorkspaceSnapshot


@frozen
class SessionBranchCreated:
    """`dev.orchestra.SessionBranchCreated`: the session branch was created in a repo."""

    repo: str
    branch: str
    base_sha: str
    base_ref: str = ""


@frozen
class AgentCommitCreated:
    """`dev.orchestra.AgentCommitCreated`: the workspace committed one agent turn's writes."""

    repo: str
    sha: str
    branch: str
    node_id: str
    turn_number: int
    message: str
    files: tuple[str, ...] = field(default=(), converter=tuple)


@frozen
class WorktreeCreated:
    """`dev.orchestra.WorktreeCreated`: a worktree was provisioned (for a parallel agent or the session)."""

    repo: str
    path: str
    branch: str
    base_sha: str
    node_id: str | None = None


@frozen
class WorktreeMerged:
    """`dev.orchestra.WorktreeMerged`: a branch's worktree was merged back at fan-in."""

    repo: str
    branch: str
    into_branch: str
    merge_sha: str
    node_id: str | None = None


@frozen
class WorktreeMergeConflict:
    """`dev.orchestra.WorktreeMergeConflict`: merging a branch at fan-in conflicted."""

    repo: str
    branch: str
    into_branch: str
    conflicting_files: tuple[str, ...] = field(default=(), converter=tuple)
    node_id: str | None = None
    detail: str | None = None


@frozen
class WorkspaceSnapshotRecorded:
    """`dev.orchestra.WorkspaceSnapshotRecorded`: a snapshot of the repos was taken at a node boundary."""

    node_id: str
    snapshot: WorkspaceSnapshot
