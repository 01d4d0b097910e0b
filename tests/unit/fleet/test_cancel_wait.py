"""`orchestra cancel` of a session a live runner holds waits for that runner to let go before it says how the run
ended: the stopped engine's `fail` comes first, the runner's `cancelled` after it, and only then the lock is free."""

from __future__ import annotations

import threading
import time

from orchestra_cli.fleet_commands import _wait_cancelled
from orchestra_core.model.records import LifecycleEvent, PipelineLifecycle
from orchestra_core.ports.session_store import SessionMetadata
from orchestra_core.session.api import append_record
from orchestra_core.testing.session_locks import InMemorySessionLocks
from orchestra_core.testing.session_store import InMemorySessionStore


def test_the_status_is_read_once_the_runner_has_let_go() -> None:
    store = InMemorySessionStore()
    locks = InMemorySessionLocks("runner")
    session = store.create_session(SessionMetadata(pipeline="p")).session_id
    lease = locks.acquire(session)
    append_record(store, session, PipelineLifecycle(LifecycleEvent.FAILED, "p", error="stopped before node nap"))

    def runner_ends() -> None:
        time.sleep(0.3)
        append_record(store, session, PipelineLifecycle(LifecycleEvent.CANCELLED, "p", error="cancelled"))
        lease.release()

    threading.Thread(target=runner_ends).start()
    assert _wait_cancelled(store, locks.runner("cancel"), session, 10) == "cancelled"


def test_a_runner_that_keeps_the_session_is_reported_still_running_after_the_wait() -> None:
    store = InMemorySessionStore()
    locks = InMemorySessionLocks("runner")
    session = store.create_session(SessionMetadata(pipeline="p")).session_id
    lease = locks.acquire(session)
    append_record(store, session, PipelineLifecycle(LifecycleEvent.STARTED, "p"))
    assert _wait_cancelled(store, locks, session, 0.2) == "still running"
    lease.release()
