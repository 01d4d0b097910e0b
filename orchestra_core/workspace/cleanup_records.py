"""What the store says about a session's workspace, for `orchestra cleanup`: its branches, worktrees, pushes."""

from __future__ import annotations

from datetime import datetime

from attrs import define, field

from orchestra_core.model import workspace_events as w
from orchestra_core.model.store_errors import SessionNotFoundError, TurnNotFoundError
from orchestra_core.ports.session_store import SessionInfo, SessionStore, StoredTurn
from orchestra_core.session.api import history
from orchestra_core.session.turn_view import decode_fields

_READ = (
    w.SessionBranchCreated, w.WorktreeCreated, w.WorktreeMergeConflict, w.WorktreeMerged, w.RemotePushed,
    w.SessionCleanedUp,
)
_TYPE_IDS = frozenset(f"dev.orchestra.{kind.__name__}" for kind in _READ)


@define
class RepoWork:
    """One repo of a session as recorded.

    Attributes:
        repo: The repo's name in `workspace.repos`.
        branches: The session branch first, then the parallel branches' branches, as created.
        worktrees: Worktree path -> the branch it was made for (none for `isolation: in_place`).
        in_place: No worktree was made for the session branch: the user's checkout was used.
        conflict: A fan-in merge conflicted and its branches were kept for the user (not once a node after the
            join took it on: the merge was then committed with its markers and the branches removed).
        pushed: Branch -> the SHA its latest RemotePushed says the remote holds.
    """

    repo: str
    branches: list[str] = field(factory=list)
    worktrees: dict[str, str] = field(factory=dict)
    in_place: bool = True
    conflict: bool = False
    pushed: dict[str, str] = field(factory=dict)

    @property
    def branch(self) -> str:
        """The session branch ("" when none was recorded)."""
        return self.branches[0] if self.branches else ""


@define
class SessionWork:
    """A session's own workspace records (not those a replay inherited) and when it was last active."""

    info: SessionInfo
    repos: dict[str, RepoWork] = field(factory=dict)
    last_active: datetime | None = None


def session_work(store: SessionStore, info: SessionInfo) -> SessionWork:
    """Read a session's own workspace events, oldest first.

    Raises:
        StoreError: The store cannot be read.
    """
    work = SessionWork(info, last_active=info.created_at)
    own = list(_own_turns(store, info))
    own.reverse()
    for turn in own:
        moment = turn.created_at if turn.type_id != "dev.orchestra.SessionCleanedUp" else None
        if moment is not None and (work.last_active is None or moment > work.last_active):
            work.last_active = moment
        if turn.type_id in _TYPE_IDS:
            _note(work, decode_fields(turn))
    return work


def _note(work: SessionWork, record: object) -> None:
    if isinstance(record, w.SessionBranchCreated):
        repo = work.repos.setdefault(record.repo, RepoWork(record.repo))
        if record.branch not in repo.branches:
            repo.branches.insert(0, record.branch)
    elif isinstance(record, w.WorktreeCreated):
        repo = work.repos.setdefault(record.repo, RepoWork(record.repo))
        repo.worktrees[record.path] = record.branch
        if record.node_id is None:
            repo.in_place = False
        elif record.branch not in repo.branches:
            repo.branches.append(record.branch)
    elif isinstance(record, w.WorktreeMergeConflict) and record.repo in work.repos:
        work.repos[record.repo].conflict = True
    elif isinstance(record, w.WorktreeMerged) and record.conflicting_files and record.repo in work.repos:
        work.repos[record.repo].conflict = False
    elif isinstance(record, w.RemotePushed) and record.repo in work.repos:
        work.repos[record.repo].pushed[record.branch] = record.sha


def _own_turns(store: SessionStore, info: SessionInfo) -> list[StoredTurn]:
    """The session's turns newest first, stopping at those a fork (a replay) inherited from its origin."""
    parent = info.metadata.parent_session_id
    forked_ms = _milliseconds(info.created_at)
    turns = []
    for turn in history(store, info.session_id):
        if parent is not None and forked_ms is not None and _inherited(store, parent, forked_ms, turn):
            break
        turns.append(turn)
    return turns


def _inherited(store: SessionStore, parent: str, forked_ms: int, turn: StoredTurn) -> bool:
    appended_ms = _milliseconds(turn.created_at)
    if appended_ms is None:
        return False
    if appended_ms != forked_ms:
        return appended_ms < forked_ms
    try:  # appended in the fork's own millisecond: inherited when the origin has it
        store.get_turn(parent, turn.turn_id)
    except (TurnNotFoundError, SessionNotFoundError):
        return False
    return True


def _milliseconds(moment: datetime | None) -> int | None:
    return None if moment is None else int(moment.timestamp() * 1000)
