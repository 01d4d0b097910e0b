"""Whether a session's run is alive: a session recorded as `running` whose runner's lock is free was interrupted.

The store says `running` from the run's start until its end is recorded; a runner that dies (SIGKILL, a lost
machine) records no end. Its session lock is freed by its death however it dies (see the SessionLocks port),
so a `running` session whose lock is free has no runner: it shows `interrupted` (and resumes as one), as does a
`new` one whose lock was taken and is free again (its runner died before it recorded its start). No timer
is involved. Locks that can tell (SessionLockHistory) must have seen the session: one run from another machine
sharing the store stays `running`, its lock being out of sight. The status is read again after the lock is found free, so a run that ended in between shows how
it ended. Branch sessions (parallel branches, child runs) hold no lock: they show their branch's outcome once it
completed, else the status of the run they belong to.
"""

from __future__ import annotations

from collections.abc import Mapping

from attrs import evolve

from orchestra_core.model import records as r
from orchestra_core.model.outcome import StageStatus
from orchestra_core.ports.session_locks import SessionLockHistory, SessionLocks
from orchestra_core.ports.session_store import SessionInfo, SessionStatus, SessionStore
from orchestra_core.session.turn_view import decode_fields

PARALLEL_SPAWN = "parallel"
_MAX_NESTING = 32
_BRANCH_DONE = {
    StageStatus.SUCCESS: SessionStatus.SUCCESS,
    StageStatus.PARTIAL_SUCCESS: SessionStatus.SUCCESS,
    StageStatus.SKIPPED: SessionStatus.SUCCESS,
    StageStatus.FAIL: SessionStatus.FAIL,
}


def runner_alive(locks: SessionLocks | None, session_id: str) -> bool:
    """Whether a runner may be recording into the session: its lock is held, or out of sight (no locks to ask,
    or locks that never saw the session: it runs on another machine sharing the store, or another project)."""
    if locks is None:
        return True
    if isinstance(locks, SessionLockHistory) and not locks.ever_held(session_id):
        return True
    return locks.holder(session_id) is not None


def runner_gone(locks: SessionLocks | None, session_id: str) -> bool:
    """Whether a runner took the session's lock here and is gone: the locks saw it held, and it is free now.

    This is what makes a `new` session (one whose runner died before it recorded its start, or one recorded by
    an older Orchestra) `interrupted`; a `new` session no runner ever took (queued in a fleet, or in the moment
    between its creation and its runner's lock) stays `new`.
    """
    return (
        isinstance(locks, SessionLockHistory) and locks.ever_held(session_id) and locks.holder(session_id) is None
    )


def live_info(store: SessionStore, info: SessionInfo, locks: SessionLocks | None) -> SessionInfo:
    """`info` with the status a reader should see: `interrupted` for a `running` session no runner holds, and for
    a `new` one whose runner took it and is gone."""
    if locks is None or info.status not in (SessionStatus.RUNNING, SessionStatus.NEW):
        return info
    if info.metadata.spawn_reason == PARALLEL_SPAWN:
        return evolve(info, status=branch_status(store, info, locks)) if info.status is SessionStatus.RUNNING else info
    if info.status is SessionStatus.NEW:
        gone = runner_gone(locks, info.session_id)
    else:
        gone = not runner_alive(locks, info.session_id)
    if not gone:
        return info
    fresh = store.get_session(info.session_id)  # the run may have moved on (or ended) between the two reads
    if fresh.status is not info.status:
        return live_info(store, fresh, locks) if fresh.status is SessionStatus.RUNNING else fresh
    return evolve(fresh, status=SessionStatus.INTERRUPTED)


def branch_completion(store: SessionStore, info: SessionInfo) -> r.ParallelExecution | None:
    """The BRANCH_COMPLETED turn at the head of a branch session, None while the branch has not completed."""
    if info.head_turn_id is None:
        return None
    head = decode_fields(store.get_turn(info.session_id, info.head_turn_id))
    if isinstance(head, r.ParallelExecution) and head.event is r.ParallelEvent.BRANCH_COMPLETED and head.status:
        return head
    return None


def root_info(store: SessionStore, info: SessionInfo, by_id: Mapping[str, SessionInfo] | None = None) -> SessionInfo:
    """The session of the run a branch session belongs to (the session itself when it is no branch)."""
    root = info
    for _ in range(_MAX_NESTING):
        parent_id = root.metadata.parent_session_id
        if root.metadata.spawn_reason != PARALLEL_SPAWN or parent_id is None:
            break
        root = (by_id or {}).get(parent_id) or store.get_session(parent_id)
    return root


def branch_status(store: SessionStore, info: SessionInfo, locks: SessionLocks | None) -> SessionStatus:
    """A branch session's status: its outcome once it completed, else that of the run it belongs to."""
    done = branch_completion(store, info)
    if done is not None and done.status is not None:
        return _BRANCH_DONE.get(done.status, SessionStatus.FAIL)
    return live_info(store, root_info(store, info), locks).status
