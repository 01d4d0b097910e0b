"""What `orchestra cleanup` reads from a session's records: a fan-in conflict counts as kept for the user until a
node after the join took it on (the merge was committed with its markers, the branches removed)."""

from __future__ import annotations

from orchestra_core.model import workspace_events as w
from orchestra_core.ports.session_store import SessionMetadata
from orchestra_core.session.api import append_record
from orchestra_core.testing.session_store import InMemorySessionStore
from orchestra_core.workspace.cleanup_records import session_work

BRANCH = "orchestra/par/1"


def _conflict(session: str) -> w.WorktreeMergeConflict:
    return w.WorktreeMergeConflict(session_id=session, repo="app", branch=f"{BRANCH}--fan-b", into_branch=BRANCH,
                                   conflicting_files=("a.py",), node_id="fan")  # fmt: skip


def _conflict_flag(*records: object) -> bool:
    store = InMemorySessionStore()
    info = store.create_session(SessionMetadata(pipeline="par"))
    created = w.SessionBranchCreated(session_id=info.session_id, repo="app", branch=BRANCH, base_sha="0" * 40)
    for record in (created, *records):
        append_record(store, info.session_id, record)
    return session_work(store, store.get_session(info.session_id)).repos["app"].conflict


def test_a_conflict_is_kept_until_a_node_after_the_join_takes_it_on() -> None:
    landed = w.WorktreeMerged(session_id="s", repo="app", branch=f"{BRANCH}--fan-b", into_branch=BRANCH,
                              merge_sha="1" * 40, node_id="fan", conflicting_files=("a.py",))  # fmt: skip
    clean = w.WorktreeMerged(session_id="s", repo="app", branch=f"{BRANCH}--fan-a", into_branch=BRANCH,
                             merge_sha="2" * 40, node_id="fan")  # fmt: skip
    assert _conflict_flag(_conflict("s"))
    assert _conflict_flag(_conflict("s"), clean)
    assert not _conflict_flag(_conflict("s"), landed)
    assert _conflict_flag(_conflict("s"), landed, _conflict("s"))  # a later fan-out conflicted again
