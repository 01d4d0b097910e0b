"""A worker's session task and the pick-up, with the in-memory ledger, locks, store and dispatcher: a worker that
dies while it starts a session (before it holds the session's lock) leaves it to the pick-up, like one that dies
later; a live worker still starting is left alone for the grace period; a session whose lock is held is never
queued again; a session whose message was lost is sent again once a worker of its queue is idle."""

from __future__ import annotations

from typing import Any

import pytest

from orchestra_adapters.dispatch import worker as worker_module
from orchestra_adapters.dispatch.session_runner import SessionTaskRunner
from orchestra_adapters.dispatch.worker import Pickup
from orchestra_core.ports.dispatcher import Task
from orchestra_core.ports.fleet import WorkerBeat
from orchestra_core.ports.session_store import SessionMetadata
from orchestra_core.testing.dispatcher import InMemoryDispatcher
from orchestra_core.testing.fleet import InMemoryFleetLedger
from orchestra_core.testing.session_locks import InMemorySessionLocks
from orchestra_core.testing.session_store import InMemorySessionStore


class _Died(BaseException):
    """The worker process died here (SIGKILL runs no handler: nothing after this point happens)."""


class _DiesWhileStarting:
    """A worker's per-task ports whose settings are never read: the worker dies building them."""

    def __init__(self, store: InMemorySessionStore, locks: InMemorySessionLocks) -> None:
        self._store = store
        self._locks = locks

    def session_store(self) -> InMemorySessionStore:
        return self._store

    def session_locks(self) -> InMemorySessionLocks:
        return self._locks

    def settings(self) -> Any:
        raise _Died()

    def shutdown_resources(self) -> None:
        pass


class _Fleet:
    def __init__(self) -> None:
        self.store = InMemorySessionStore()
        self.locks = InMemorySessionLocks("w1")
        self.ledger = InMemoryFleetLedger()
        self.dispatcher = InMemoryDispatcher()
        self.session = self.store.create_session(SessionMetadata(pipeline="p")).session_id
        self.ledger.add(self.session, "t1", "orchestra", {"pipeline_name": "p"})

    def pickup(self, name: str) -> Pickup:
        return Pickup(self.ledger, self.store, self.locks.runner(name), self.dispatcher, lambda: {})

    def run_task_and_die(self) -> None:
        runner = SessionTaskRunner(lambda: _DiesWhileStarting(self.store, self.locks), self.ledger, "w1")
        with pytest.raises(_Died):
            runner(Task("session", self.session, "orchestra", {}, "t1"))


def test_a_worker_that_dies_while_it_starts_a_session_leaves_it_to_the_pickup(monkeypatch: pytest.MonkeyPatch) -> None:
    fleet = _Fleet()
    fleet.run_task_and_die()
    entry = fleet.ledger.get(fleet.session)
    assert entry is not None and (entry.state, entry.worker) == ("running", "w1")
    monkeypatch.setattr(worker_module, "PICKUP_GRACE_S", 0.0)
    assert fleet.pickup("w2").sweep() == [fleet.session]
    again = fleet.ledger.get(fleet.session)
    assert again is not None and again.state == "queued" and again.pickups == 1
    assert [task.session_id for task in fleet.dispatcher.submitted] == [fleet.session]
    assert again.task_id == fleet.dispatcher.submitted[0].task_id


def test_a_worker_still_starting_is_left_alone_for_the_grace_period() -> None:
    fleet = _Fleet()
    fleet.run_task_and_die()  # as far as the ledger can tell, a live worker that has not taken the lock yet
    assert fleet.pickup("w2").sweep() == []
    entry = fleet.ledger.get(fleet.session)
    assert entry is not None and entry.state == "running" and fleet.dispatcher.submitted == []


def test_a_session_whose_lock_is_held_is_never_queued_again(monkeypatch: pytest.MonkeyPatch) -> None:
    fleet = _Fleet()
    fleet.ledger.take(fleet.session, "w1")
    lease = fleet.locks.acquire(fleet.session)
    monkeypatch.setattr(worker_module, "PICKUP_GRACE_S", 0.0)
    assert fleet.pickup("w2").sweep() == []
    lease.release()
    assert fleet.pickup("w2").sweep() == [fleet.session]


def test_a_task_for_a_session_another_runner_holds_changes_nothing() -> None:
    fleet = _Fleet()
    fleet.ledger.take(fleet.session, "w0")
    lease = fleet.locks.runner("w0").acquire(fleet.session)
    runner = SessionTaskRunner(lambda: _DiesWhileStarting(fleet.store, fleet.locks), fleet.ledger, "w1")
    outcome = runner(Task("session", fleet.session, "orchestra", {}, "t1"))
    assert outcome["outcome"] == "busy"
    entry = fleet.ledger.get(fleet.session)
    assert entry is not None and entry.worker == "w0"
    lease.release()



def _beat(fleet: _Fleet, name: str, queues: tuple[str, ...], running: int, concurrency: int = 2) -> None:
    fleet.ledger.beat(WorkerBeat(name, queues, concurrency, {f"s{n}": "p" for n in range(running)}, started_at=None))


def test_a_session_whose_message_was_lost_is_sent_again_when_a_worker_of_its_queue_is_idle(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fleet = _Fleet()
    monkeypatch.setattr(worker_module, "RESEND_AFTER_S", 0.0)
    _beat(fleet, "busy", ("orchestra",), running=2)
    _beat(fleet, "gpu", ("gpu",), running=0)
    assert fleet.pickup("w2").sweep() == []  # its queue's only worker is busy: it waits its turn
    _beat(fleet, "idle", ("orchestra",), running=1)
    sent: list[tuple[str, str]] = []
    pickup = Pickup(fleet.ledger, fleet.store, fleet.locks, fleet.dispatcher, lambda: {}, lambda s, why: sent.append((s, why)))
    assert pickup.sweep() == [fleet.session]
    entry = fleet.ledger.get(fleet.session)
    assert entry is not None and entry.state == "queued" and entry.pickups == 0 and entry.task_id != "t1"
    assert [task.task_id for task in fleet.dispatcher.submitted] == [entry.task_id]
    assert sent and sent[0][0] == fleet.session and "sent again" in sent[0][1]


def test_a_session_queued_only_a_moment_or_cancelled_is_not_sent_again(monkeypatch: pytest.MonkeyPatch) -> None:
    fleet = _Fleet()
    _beat(fleet, "idle", ("orchestra",), running=0)
    assert fleet.pickup("w2").sweep() == []  # younger than RESEND_AFTER_S
    monkeypatch.setattr(worker_module, "RESEND_AFTER_S", 0.0)
    fleet.ledger.request_cancel(fleet.session)
    assert fleet.pickup("w2").sweep() == [] and fleet.dispatcher.submitted == []
