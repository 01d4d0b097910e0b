"""Workspace events (seeds 000 and 001): branches, worktrees, per-turn commits, merges and warnings.

The workspace hands each event to its callback as it happens; the session recorder stores the ones that
have a turn type (`dev.orchestra.SessionBranchCreated`, ...) as they are. Fields the store does not keep
(`session_id`, `level`, where a worktree is, ...) take their defaults when a stored event is read back.
"""

from __future__ import annotations

from attrs import field, frozen

from orchestra_core.model.failover import ModelFailover
from orchestra_core.model.immutable import str_tuple
from orchestra_core.model.records import WorkspaceSnapshot
from orchestra_core.model.remote_urls import redact_url


@frozen(kw_only=True)
class WorkspaceEvent:
    """Base of every workspace event.

    Attributes:
        session_id: The session whose workspace it happened in ("" when read back from the store).
        level: `info`, or `warning` for events a user should see (progress output prints them).
    """

    session_id: str = ""
    level: str = "info"

    @property
    def kind(self) -> str:
        """The event's type name, e.g. `AgentCommitCreated`."""
        return type(self).__name__


@frozen(kw_only=True)
class SessionBranchCreated(WorkspaceEvent):
    """A session branch was set up in a repo (stored as `dev.orchestra.SessionBranchCreated`).

    `requested_branch` differs from `branch` when the natural name was taken and another was chosen;
    `isolation` is `worktree` (then a WorktreeCreated event follows) or `in_place`.
    """

    repo: str
    branch: str
    base_sha: str
    base_ref: str = ""
    worktree_path: str = ""
    isolation: str = "worktree"
    requested_branch: str = ""


@frozen(kw_only=True)
class WorktreeCreated(WorkspaceEvent):
    """A worktree was provisioned, for the session or for one parallel agent (`node_id`)."""

    repo: str
    path: str
    branch: str
    base_sha: str
    node_id: str | None = None


@frozen(kw_only=True)
class AgentCommitCreated(WorkspaceEvent):
    """A turn's writes were committed to a session branch.

    `message_source`: `generator`, the deterministic `fallback`, or `fixed` (a tool stage's message, no model).
    """

    repo: str
    sha: str
    branch: str
    node_id: str
    turn_number: int
    message: str
    files: tuple[str, ...] = field(default=(), converter=str_tuple)
    message_source: str = "generator"


@frozen(kw_only=True)
class UntrackedWritesCommitted(WorkspaceEvent):
    """Changes in a worktree that no tool reported (a CLI agent's own tools, a shell redirect) were
    committed apart, with an `Orchestra-Untracked: true` trailer; `paths` names them."""

    repo: str
    node_id: str
    turn_number: int
    paths: tuple[str, ...] = field(default=(), converter=str_tuple)
    sha: str = ""
    branch: str = ""
    level: str = "warning"


@frozen(kw_only=True)
class WorktreeMerged(WorkspaceEvent):
    """A parallel agent's branch was merged back into the session branch at fan-in; `conflicting_files`: those it
    left with conflict markers for the node after the join to resolve (a conflict the join routed on)."""

    repo: str
    branch: str
    into_branch: str
    merge_sha: str
    node_id: str | None = None
    conflicting_files: tuple[str, ...] = field(default=(), converter=str_tuple)


@frozen(kw_only=True)
class WorktreeMergeConflict(WorkspaceEvent):
    """Merging a parallel agent's branch at fan-in conflicted; the session branch stayed as it was."""

    repo: str
    branch: str
    into_branch: str
    conflicting_files: tuple[str, ...] = field(default=(), converter=str_tuple)
    node_id: str | None = None
    detail: str | None = None
    level: str = "warning"


@frozen(kw_only=True)
class CommitMessageFallback(WorkspaceEvent):
    """The commit message generator failed or produced nothing usable; the fallback message was used."""

    repo: str
    node_id: str
    turn_number: int
    reason: str
    level: str = "warning"


@frozen(kw_only=True)
class CommitModelFailedOver(WorkspaceEvent):
    """The commit-message model failed in a way it cannot recover from and the message came from its next fallback
    (`failover.purpose` is `commit_message`; the session stores the ModelFailover itself)."""

    repo: str
    failover: ModelFailover
    level: str = "warning"


@frozen(kw_only=True)
class WritesNotCommitted(WorkspaceEvent):
    """Some of a turn's writes were left out of its commit (ignored by git, or an unknown repo)."""

    repo: str
    node_id: str
    turn_number: int
    paths: tuple[str, ...] = field(default=(), converter=str_tuple)
    reason: str = ""
    level: str = "warning"


@frozen(kw_only=True)
class WorkspaceRestored(WorkspaceEvent):
    """A repo's session worktree was discarded and recreated at `sha` (rollback, restore or reopen).

    `previous_sha` is where the branch was before; when that differs from `sha`, `abandoned_ref`
    (`refs/orchestra/abandoned/<session>/<n>`) keeps it reachable and the event is a warning.
    """

    repo: str
    branch: str
    sha: str
    reason: str
    previous_sha: str = ""
    abandoned_ref: str = ""


@frozen(kw_only=True)
class UncommittedWorkSaved(WorkspaceEvent):
    """A worktree held changes nobody had committed (a user's edits, a stage killed mid-way) when Orchestra was
    about to reset, rebuild or remove it (`reason`: `resume`, `restore`, `rollback`, `fork`, `join`, ...): they
    were committed on top of its HEAD as `sha`, kept under `abandoned_ref` (`refs/orchestra/abandoned/...`),
    before anything was discarded (stored as `dev.orchestra.UncommittedWorkSaved`).

    `paths` are the files saved; `left_out` those that could not be (not a clean path inside the repo, or content
    git's fsck refuses); files git ignores are never part of it.
    """

    repo: str
    worktree_path: str
    branch: str
    sha: str
    abandoned_ref: str
    reason: str
    paths: tuple[str, ...] = field(default=(), converter=str_tuple)
    left_out: tuple[str, ...] = field(default=(), converter=str_tuple)
    level: str = "warning"


@frozen(kw_only=True)
class WorkspaceSnapshotRecorded(WorkspaceEvent):
    """A checkpoint recorded every repo's head because some head moved since the last snapshot
    (stored as `dev.orchestra.WorkspaceSnapshotRecorded`, right after that checkpoint's turn).

    `node_id` is the node the checkpoint was taken after (None: before the start node ran);
    `checkpoint_turn_id` the checkpoint's turn.
    """

    snapshot: WorkspaceSnapshot
    node_id: str | None = None
    checkpoint_turn_id: str | None = None

    @property
    def heads(self) -> dict[str, str]:
        """Repo name -> head SHA."""
        return self.snapshot.sha_by_repo()


@frozen(kw_only=True)
class ProjectLinkFailed(WorkspaceEvent):
    """The project could not be recorded in a repo's git config, so `orchestra show` run from that repo
    alone will not find the session (it still does from the project, or with `--config`)."""

    repo: str
    reason: str
    level: str = "warning"


@frozen(kw_only=True)
class RepoCloned(WorkspaceEvent):
    """A repo with a `remote` and no checkout at its `path` was cloned there at session start.

    `url` is always redacted (the constructor strips a password); `depth` is the shallow clone's depth,
    None for a full clone.
    """

    repo: str
    url: str = field(converter=redact_url)
    path: str
    depth: int | None = None


@frozen(kw_only=True)
class RepoFetched(WorkspaceEvent):
    """A repo's remote was fetched (at session start, or the session branch on a resume); `url` redacted."""

    repo: str
    url: str = field(converter=redact_url)


@frozen(kw_only=True)
class RemotePushed(WorkspaceEvent):
    """The remote's `branch` now holds `sha` (a session branch was pushed); `remote_url` redacted.

    The latest RemotePushed of a session for a repo is what "pushed" means for it (status, cleanup).
    """

    repo: str
    branch: str
    sha: str
    remote_url: str = field(default="", converter=redact_url)


@frozen(kw_only=True)
class PushFailed(WorkspaceEvent):
    """Pushing a session branch failed; the run goes on and the next push retries.

    `category` is one of `auth`, `network`, `rejected`, `not_found`, `other` (`protected` when the branch is
    protected and was never tried); `reason` is git's message, redacted.
    """

    repo: str
    branch: str
    sha: str
    reason: str = field(converter=redact_url)
    category: str = "other"
    level: str = "warning"


@frozen(kw_only=True)
class SessionRolledBack(WorkspaceEvent):
    """A failed run was rolled back in a repo (`--rollback-on-failure`): its session branch and worktrees are
    gone and an in_place checkout is back where it was.

    `head_sha` is where the session branch was; `abandoned_ref` (`refs/orchestra/abandoned/<session>/<n>`)
    keeps it reachable ("" when the branch had no commits beyond `base_sha`).
    """

    repo: str
    branch: str
    head_sha: str
    base_sha: str
    abandoned_ref: str = ""
    level: str = "warning"


@frozen(kw_only=True)
class SessionCleanedUp(WorkspaceEvent):
    """`orchestra cleanup` removed a session branch (and its worktree, `worktree_path`, "" for none) whose head
    was `head_sha`; `reason` is why it could go (`merged`, `pushed`, `forced`), `abandoned_ref` keeps unmerged
    commits reachable when it was forced."""

    repo: str
    branch: str
    head_sha: str
    worktree_path: str = ""
    reason: str = ""
    abandoned_ref: str = ""


@frozen(kw_only=True)
class IncludedFilesCopied(WorkspaceEvent):
    """Ignored files the repo's `.worktreeinclude` names were copied into a new worktree (not stored)."""

    repo: str
    worktree_path: str
    paths: tuple[str, ...] = field(default=(), converter=str_tuple)


@frozen(kw_only=True)
class IncludedFileSkipped(WorkspaceEvent):
    """A file `.worktreeinclude` names was not copied into a worktree (a link leading out of the repository,
    too large, inside `.git`, ...); `reason` says why (not stored)."""

    repo: str
    path: str
    reason: str
    level: str = "warning"


__all__ = [
    "AgentCommitCreated",
    "CommitMessageFallback",
    "CommitModelFailedOver",
    "IncludedFileSkipped",
    "IncludedFilesCopied",
    "ProjectLinkFailed",
    "PushFailed",
    "RemotePushed",
    "RepoCloned",
    "RepoFetched",
    "SessionBranchCreated",
    "SessionCleanedUp",
    "SessionRolledBack",
    "UncommittedWorkSaved",
    "UntrackedWritesCommitted",
    "WorkspaceEvent",
    "WorkspaceRestored",
    "WorkspaceSnapshotRecorded",
    "WorktreeCreated",
    "WorktreeMergeConflict",
    "WorktreeMerged",
    "WritesNotCommitted",
]
