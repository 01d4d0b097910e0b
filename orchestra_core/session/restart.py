"""A session stopped before its first checkpoint: what it recorded of its start, so that `resume` starts it again
from the beginning in the same session, and the one sentence every command says about resuming a stopped session.

A run records its start (`PipelineLifecycle` `started`, with the pipeline's source and `--set` values) as soon as
its runner holds the session, and each session branch as soon as it is made; its first checkpoint comes later,
after the workspace and the backend are set up. A run killed in between has no checkpoint to continue from, but
all it needs to begin again.
"""

from __future__ import annotations

from collections.abc import Iterator

from orchestra_core.model import records as r
from orchestra_core.model import workspace_events as w
from orchestra_core.ports.session_store import Id, SessionStore, StoredTurn
from orchestra_core.session.api import history
from orchestra_core.session.catalog import PIPELINE_LIFECYCLE, SESSION_BRANCH_CREATED
from orchestra_core.session.checkpoints import RepoHead
from orchestra_core.session.turn_view import decode_fields

_STARTS = (r.LifecycleEvent.STARTED, r.LifecycleEvent.RESUMED)


def recorded_start(store: SessionStore, session_id: Id) -> r.PipelineLifecycle | None:
    """The latest start the session recorded with its pipeline (its source file or blob), None when it recorded
    none (it was never run, or an older Orchestra stopped before recording it)."""
    for record in _records(store, session_id, PIPELINE_LIFECYCLE.type_id):
        if isinstance(record, r.PipelineLifecycle) and record.event in _STARTS and (record.dot_blob or record.dot_path):
            return record
    return None


def recorded_branches(store: SessionStore, session_id: Id) -> dict[str, RepoHead]:
    """Each workspace repo's session branch as the session recorded making it, at its recorded base (the latest
    record of each repo wins)."""
    found: dict[str, RepoHead] = {}
    for record in _records(store, session_id, SESSION_BRANCH_CREATED.type_id):
        if isinstance(record, w.SessionBranchCreated) and record.repo not in found:
            found[record.repo] = RepoHead(record.branch, record.base_sha, record.base_sha)
    return dict(reversed(found.items()))  # in the order they were made


def resume_advice(store: SessionStore, session_id: Id) -> str:
    """What `orchestra resume` does with a stopped session, in the words `status`, `attach`, `cleanup` and
    `resume` all use: continue it from its latest checkpoint, or start it again from the beginning."""
    if store.latest_checkpoint(session_id) is not None:
        return f"`orchestra resume {session_id}` continues it"
    if recorded_start(store, session_id) is None:
        return (
            f"`orchestra resume {session_id} --pipeline FILE` starts it again from the beginning "
            "(it stopped before its first checkpoint, and before it recorded its pipeline)"
        )
    return f"`orchestra resume {session_id}` starts it again from the beginning (it stopped before its first checkpoint)"


def _records(store: SessionStore, session_id: Id, type_id: str) -> Iterator[object]:
    """The decoded records of one type in the session's history, newest first."""
    turn: StoredTurn
    for turn in history(store, session_id):
        if turn.type_id == type_id:
            yield decode_fields(turn)


__all__ = ["recorded_branches", "recorded_start", "resume_advice"]
