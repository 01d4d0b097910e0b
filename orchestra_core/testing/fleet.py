"""InMemoryFleetLedger: the FleetLedger port in memory (one dict per table, one lock), time from a Clock."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from attrs import evolve

from orchestra_core.ports.clock import Clock, SystemClock
from orchestra_core.ports.fleet import BranchEntry, FleetEntry, FleetState, WorkerBeat

_Entry = TypeVar("_Entry", FleetEntry, BranchEntry)


class InMemoryFleetLedger:
    """The fleet's bookkeeping of one process; every state change is a compare-and-set under one lock."""

    def __init__(self, clock: Clock | None = None) -> None:
        self.location = "memory"
        self._clock = clock or SystemClock()
        self._sessions: dict[str, FleetEntry] = {}
        self._branches: dict[tuple[str, str], BranchEntry] = {}
        self._workers: dict[str, WorkerBeat] = {}
        self._lock = threading.Lock()

    # sessions ---------------------------------------------------------------------------------------------
    def add(self, session_id: str, task_id: str, queue: str, submission: Mapping[str, Any]) -> FleetEntry:
        with self._lock:
            known = self._sessions.get(session_id)
            pickups = known.pickups if known is not None else 0
            entry = FleetEntry(
                session_id, "queued", task_id, queue, submission=submission, pickups=pickups, updated_at=self._clock.now()
            )
            self._sessions[session_id] = entry
            return entry

    def get(self, session_id: str) -> FleetEntry | None:
        with self._lock:
            return self._sessions.get(session_id)

    def entries(self, *, states: Sequence[FleetState] = ("queued", "running", "done"), limit: int = 200) -> list[FleetEntry]:
        with self._lock:
            found = [entry for entry in self._sessions.values() if entry.state in states]
        return _newest_first(found)[: max(limit, 0)]

    def take(self, session_id: str, worker: str) -> FleetEntry | None:
        return self._change_session(session_id, lambda e: e.state == "queued", state="running", worker=worker)

    def start(self, session_id: str, worker: str) -> FleetEntry | None:
        return self._change_session(session_id, lambda e: e.state != "done", state="running", worker=worker)

    def finish(self, session_id: str, worker: str) -> None:
        changes: dict[str, Any] = {"state": "done"}
        if worker:
            changes["worker"] = worker
        self._change_session(session_id, lambda e: True, **changes)

    def requeue(self, session_id: str, old_task_id: str, new_task_id: str) -> bool:
        with self._lock:
            entry = self._sessions.get(session_id)
            if entry is None or entry.state != "running" or entry.task_id != old_task_id:
                return False
            self._sessions[session_id] = self._touch(entry, state="queued", task_id=new_task_id, pickups=entry.pickups + 1)
            return True

    def resend(self, session_id: str, old_task_id: str, new_task_id: str) -> bool:
        with self._lock:
            entry = self._sessions.get(session_id)
            if entry is None or entry.state != "queued" or entry.task_id != old_task_id or entry.cancel_requested:
                return False
            self._sessions[session_id] = self._touch(entry, task_id=new_task_id)
            return True

    def request_cancel(self, session_id: str) -> FleetEntry | None:
        return self._change_session(session_id, lambda e: True, cancel_requested=True)

    # branches ---------------------------------------------------------------------------------------------
    def add_branch(self, session_id: str, branch: str, task_id: str, queue: str, line: str) -> BranchEntry:
        with self._lock:
            entry = BranchEntry(session_id, branch, "queued", task_id, queue, line, updated_at=self._clock.now())
            self._branches[(session_id, branch)] = entry
            return entry

    def get_branch(self, session_id: str, branch: str) -> BranchEntry | None:
        with self._lock:
            return self._branches.get((session_id, branch))

    def branches(self, session_id: str) -> list[BranchEntry]:
        with self._lock:
            found = [entry for (session, _), entry in self._branches.items() if session == session_id]
        return _newest_first(found)

    def claim_branch(self, session_id: str, branch: str, task_id: str, worker: str) -> BranchEntry | None:
        with self._lock:
            entry = self._branches.get((session_id, branch))
            if entry is None or entry.state != "queued" or entry.task_id != task_id or entry.cancel_requested:
                return None
            entry = self._branches[(session_id, branch)] = self._touch(entry, state="running", worker=worker)
            return entry

    def finish_branch(self, session_id: str, branch: str, task_id: str, result: Mapping[str, Any]) -> bool:
        with self._lock:
            entry = self._branches.get((session_id, branch))
            if entry is None or entry.state != "running" or entry.task_id != task_id:
                return False
            self._branches[(session_id, branch)] = self._touch(entry, state="done", result=result)
            return True

    def requeue_branch(self, session_id: str, branch: str, old_task_id: str, new_task_id: str, line: str) -> bool:
        with self._lock:
            entry = self._branches.get((session_id, branch))
            if entry is None or entry.state != "running" or entry.task_id != old_task_id:
                return False
            self._branches[(session_id, branch)] = self._touch(
                entry, state="queued", task_id=new_task_id, line=line, worker="", pickups=entry.pickups + 1
            )
            return True

    def resend_branch(self, session_id: str, branch: str, old_task_id: str, new_task_id: str) -> bool:
        with self._lock:
            entry = self._branches.get((session_id, branch))
            if entry is None or entry.state != "queued" or entry.task_id != old_task_id or entry.cancel_requested:
                return False
            self._branches[(session_id, branch)] = self._touch(entry, task_id=new_task_id)
            return True

    def cancel_branch(self, session_id: str, branch: str) -> BranchEntry | None:
        with self._lock:
            entry = self._branches.get((session_id, branch))
            if entry is None:
                return None
            entry = self._branches[(session_id, branch)] = self._touch(entry, cancel_requested=True)
            return entry

    # workers ----------------------------------------------------------------------------------------------
    def beat(self, worker: WorkerBeat) -> None:
        with self._lock:
            known = self._workers.get(worker.name)
            started = worker.started_at or (known.started_at if known else None) or self._clock.now()
            self._workers[worker.name] = evolve(worker, started_at=started, beat_at=self._clock.now())

    def workers(self) -> list[WorkerBeat]:
        with self._lock:
            beats = list(self._workers.values())
        return sorted(beats, key=lambda beat: beat.beat_at or self._clock.now(), reverse=True)

    def close(self) -> None:
        return None

    # helpers ----------------------------------------------------------------------------------------------
    def _change_session(self, session_id: str, allowed: Any, **changes: Any) -> FleetEntry | None:
        with self._lock:
            entry = self._sessions.get(session_id)
            if entry is None or not allowed(entry):
                return None
            entry = self._sessions[session_id] = self._touch(entry, **changes)
            return entry

    def _touch(self, entry: _Entry, **changes: Any) -> _Entry:
        return evolve(entry, updated_at=self._clock.now(), **changes)


def _newest_first(entries: list[Any]) -> list[Any]:
    return sorted(entries, key=lambda entry: entry.updated_at, reverse=True)


__all__ = ["InMemoryFleetLedger"]
