"""`orchestra worker`: a Celery worker serving the fleet's queues, with the two duties the broker cannot do well:
heartbeats in the ledger, and picking up sessions whose runner died (decided by their session locks)."""

from __future__ import annotations

import os
import socket
import threading
import uuid
from collections.abc import Callable, Sequence
from contextlib import suppress
from datetime import UTC, datetime, timedelta
from typing import Any

from orchestra_adapters.dispatch.session_runner import FINAL
from orchestra_core.ports.dispatcher import Dispatcher, Task, TaskHandle
from orchestra_core.ports.fleet import SESSION_ORIGIN_RUN, FleetLedger, WorkerBeat
from orchestra_core.ports.session_locks import SessionLocks
from orchestra_core.ports.session_store import SessionStore
from orchestra_core.runs.fleet_branches import LIVE_WORKER_S

HEARTBEAT_S = 5.0
# A `running` entry younger than this is left alone while its lock is free: its worker took the task and is still
# starting (building its ports, loading the pipeline) before it takes the lock, which takes seconds under load.
PICKUP_GRACE_S = 10.0
RESEND_AFTER_S = 30.0  # a queued session waiting this long while a worker of its queue is idle lost its message


def default_worker_name() -> str:
    return f"orchestra-{os.getpid()}@{socket.gethostname()}"


class Pickup:
    """Finds sessions whose runner died, or whose message was lost, and sends them again, once.

    A `running` entry whose session has not ended and whose lock is free (the database freed it when the runner's
    connection died) is requeued by compare-and-set, so of all the workers looking at the same moment exactly one
    sends the new task. A `queued` entry still waiting after RESEND_AFTER_S while a live worker of its queue has a
    free slot lost its message (reserved by a worker that died before starting it, which Redis would give back only
    after its visibility timeout): it is sent again under a new task id, also by compare-and-set.
    """

    def __init__(
        self,
        ledger: FleetLedger,
        store: SessionStore,
        locks: SessionLocks,
        dispatcher: Dispatcher,
        mine: Callable[[], dict[str, str]],
        on_send: Callable[[str, str], Any] = lambda session_id, why: None,
    ) -> None:
        """`on_send(session_id, why)` is told of each session sent again."""
        self._ledger = ledger
        self._store = store
        self._locks = locks
        self._dispatcher = dispatcher
        self._mine = mine
        self._on_send = on_send

    def sweep(self) -> list[str]:
        """One look at the running and the queued sessions; the ids of those sent again."""
        return [*self._requeue_lost_runners(), *self._resend_lost_messages()]

    def _requeue_lost_runners(self) -> list[str]:
        requeued = []
        now = datetime.now(UTC)
        for entry in self._ledger.entries(states=("running",)):
            if entry.session_id in self._mine():
                continue
            if entry.updated_at is not None and now - entry.updated_at < timedelta(seconds=PICKUP_GRACE_S):
                continue
            if self._store.get_session(entry.session_id).status in FINAL:
                self._ledger.finish(entry.session_id, "")
                continue
            if self._locks.holder(entry.session_id) is not None:
                continue
            if entry.submission.get("origin") == SESSION_ORIGIN_RUN:  # its runner was a command: not the fleet's
                self._ledger.finish(entry.session_id, "")
                continue
            task_id = uuid.uuid4().hex
            if self._ledger.requeue(entry.session_id, entry.task_id, task_id):
                self._dispatcher.submit(Task("session", entry.session_id, entry.queue, task_id=task_id))
                requeued.append(entry.session_id)
                self._on_send(entry.session_id, "lost its runner (its lock is free): queued again")
        return requeued

    def _resend_lost_messages(self) -> list[str]:
        now = datetime.now(UTC)
        waiting = [
            entry for entry in self._ledger.entries(states=("queued",))
            if entry.task_id and not entry.cancel_requested and entry.updated_at is not None
            and now - entry.updated_at >= timedelta(seconds=RESEND_AFTER_S)
        ]  # fmt: skip
        if not waiting:
            return []
        idle_queues = {
            queue for beat in self._ledger.workers()
            if beat.beat_at is not None and (now - beat.beat_at).total_seconds() < LIVE_WORKER_S
            and len(beat.running) < beat.concurrency
            for queue in beat.queues
        }  # fmt: skip
        resent = []
        for entry in waiting:
            if entry.queue not in idle_queues:
                continue  # every worker of its queue is busy: it waits its turn in the broker
            task_id = uuid.uuid4().hex
            if self._ledger.resend(entry.session_id, entry.task_id, task_id):
                with suppress(Exception):  # a message that comes back after all then finds another task id
                    self._dispatcher.cancel(TaskHandle(entry.task_id, "session", entry.session_id, entry.queue))
                self._dispatcher.submit(Task("session", entry.session_id, entry.queue, task_id=task_id))
                resent.append(entry.session_id)
                self._on_send(entry.session_id, f"still queued after {RESEND_AFTER_S:g} s while a worker of its queue is idle: sent again")
        return resent


class WorkerDuties:
    """The worker's background threads: a heartbeat every HEARTBEAT_S, a pickup sweep every `pickup_interval_s`."""

    def __init__(
        self,
        name: str,
        queues: Sequence[str],
        concurrency: int,
        ledger: FleetLedger,
        running: Callable[[], dict[str, str]],
        pickup: Pickup,
        pickup_interval_s: float,
    ) -> None:
        self._beat = WorkerBeat(name, tuple(queues), concurrency, started_at=datetime.now(UTC))
        self._ledger = ledger
        self._running = running
        self._pickup = pickup
        self._interval = pickup_interval_s
        self._stop = threading.Event()

    def start(self) -> None:
        self.beat()
        threading.Thread(target=self._loop, args=(HEARTBEAT_S, self.beat), name="orchestra-heartbeat", daemon=True).start()
        threading.Thread(target=self._loop, args=(self._interval, self._pickup.sweep), name="orchestra-pickup", daemon=True).start()

    def beat(self) -> None:
        from attrs import evolve

        self._ledger.beat(evolve(self._beat, running=self._running()))

    def stop(self) -> None:
        self._stop.set()

    def _loop(self, every: float, duty: Callable[[], Any]) -> None:
        while not self._stop.wait(every):
            with suppress(Exception):  # a store or broker hiccup: try again next time
                duty()
