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
from orchestra_core.ports.dispatcher import Dispatcher, Task
from orchestra_core.ports.fleet import SESSION_ORIGIN_RUN, FleetLedger, WorkerBeat
from orchestra_core.ports.session_locks import SessionLocks
from orchestra_core.ports.session_store import SessionStore

HEARTBEAT_S = 5.0
# A `running` entry younger than this is left alone while its lock is free: its worker took the task and is still
# starting (building its ports, loading the pipeline) before it takes the lock, which takes seconds under load.
PICKUP_GRACE_S = 10.0


def default_worker_name() -> str:
    return f"orchestra-{os.getpid()}@{socket.gethostname()}"


class Pickup:
    """Finds sessions whose runner died and queues them again, once: a `running` entry whose session has not ended
    and whose lock is free (the database freed it when the runner's connection died) is requeued by compare-and-set,
    so of all the workers looking at the same moment exactly one sends the new task."""

    def __init__(
        self,
        ledger: FleetLedger,
        store: SessionStore,
        locks: SessionLocks,
        dispatcher: Dispatcher,
        mine: Callable[[], dict[str, str]],
        on_requeue: Callable[[str], Any] = lambda session_id: None,
    ) -> None:
        self._ledger = ledger
        self._store = store
        self._locks = locks
        self._dispatcher = dispatcher
        self._mine = mine
        self._on_requeue = on_requeue

    def sweep(self) -> list[str]:
        """One look at the running sessions; the ids of those queued again."""
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
                self._on_requeue(entry.session_id)
        return requeued


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
