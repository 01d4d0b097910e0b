"""FleetLedger port: what a fleet of workers shares besides the session store: which sessions (and parallel branches)
were handed to it and where each stands, cancel requests, and the workers' heartbeats."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Literal, Protocol, runtime_checkable

from attrs import field, frozen

from orchestra_core.model.immutable import frozen_map

FleetState = Literal["queued", "running", "done"]
SESSION_ORIGIN_RUN = "run"
"""`submission["origin"]` of a session `orchestra run` runs in its own process: listed and cancellable, never
picked up by a worker (its runner is the command; `orchestra resume` continues it)."""


@frozen
class FleetEntry:
    """A session handed to the fleet.

    Attributes:
        session_id: The session.
        state: `queued` (a task waits for a worker), `running` (a worker took the session's lock and runs it) or
            `done` (it ended: success, fail or cancelled).
        task_id: The task that should run it now (a requeue after a lost worker replaces it).
        queue: The queue its session tasks go to.
        worker: The worker that runs it (or ran it last).
        submission: What `orchestra submit` recorded: the pipeline's path and blob, the initial context, options.
        cancel_requested: `orchestra cancel` asked for it to stop.
        pickups: How often it was picked up again after a lost worker.
        updated_at: When the entry last changed (UTC).
    """

    session_id: str
    state: FleetState
    task_id: str
    queue: str
    worker: str = ""
    submission: Mapping[str, Any] = field(factory=dict, converter=frozen_map)
    cancel_requested: bool = False
    pickups: int = 0
    updated_at: datetime | None = None


@frozen
class BranchEntry:
    """A parallel branch handed to the fleet by the runner of its session.

    Attributes:
        session_id: The session (the main line) the branch belongs to.
        branch: The branch path (`<parallel node>:<start node>`).
        state: `queued` (its task waits for a worker), `running` (a runner took it) or `done` (its result is in).
        task_id: The task that should run it now (a re-run after a lost worker, or a new fan-out, replaces it).
        queue: The queue its tasks go to.
        line: The session that records the branch's turns (a fork of the session; a re-run gets a fresh one).
        worker: The runner that took it (a worker, or the session's own runner when nobody took it in time).
        result: What its runner returned (when `done`).
        cancel_requested: The session's runner no longer wants it (first_success, a timeout, a cancel).
        pickups: How often it was run again after a lost worker.
        updated_at: When the entry last changed (UTC).
    """

    session_id: str
    branch: str
    state: FleetState
    task_id: str
    queue: str
    line: str = ""
    worker: str = ""
    result: Mapping[str, Any] = field(factory=dict, converter=frozen_map)
    cancel_requested: bool = False
    pickups: int = 0
    updated_at: datetime | None = None


@frozen
class WorkerBeat:
    """A worker's last heartbeat: who it is, what it serves, what it runs now (session id -> what)."""

    name: str
    queues: tuple[str, ...]
    concurrency: int
    running: Mapping[str, str] = field(factory=dict, converter=frozen_map)
    started_at: datetime | None = None
    beat_at: datetime | None = None


@runtime_checkable
class FleetLedger(Protocol):
    """The fleet's shared bookkeeping (a table beside the session store). Every change of an entry's state is a
    compare-and-set, so two workers (or two reapers) never both win the same transition.

    Attributes:
        location: Where the ledger lives, for messages (no password).
    """

    location: str

    def add(self, session_id: str, task_id: str, queue: str, submission: Mapping[str, Any]) -> FleetEntry:
        """Record a session handed to the fleet (state `queued`); an entry it had is replaced (a session run again
        by `orchestra resume`), keeping only its pickup count."""
        ...

    def get(self, session_id: str) -> FleetEntry | None:
        """The session's entry, None when the fleet never had it."""
        ...

    def entries(self, *, states: Sequence[FleetState] = ("queued", "running", "done"), limit: int = 200) -> list[FleetEntry]:
        """Entries in these states, most recently changed first."""
        ...

    def take(self, session_id: str, worker: str) -> FleetEntry | None:
        """Compare-and-set: a worker took the session's task and is about to run it, so a `queued` entry becomes
        `running` under that worker (a worker that dies before it holds the session's lock is then noticed by the
        pick-up, like one that dies later); None when the entry is not `queued` (or missing)."""
        ...

    def start(self, session_id: str, worker: str) -> FleetEntry | None:
        """The worker holds the session's lock and runs it: state `running` (from `queued` or `running`); None
        when the entry is `done` or missing."""
        ...

    def finish(self, session_id: str, worker: str) -> None:
        """The session ended (state `done`)."""
        ...

    def requeue(self, session_id: str, old_task_id: str, new_task_id: str) -> bool:
        """Compare-and-set: a `running` entry still naming `old_task_id` goes back to `queued` with
        `new_task_id` (one more pickup); False when someone else changed it first."""
        ...

    def resend(self, session_id: str, old_task_id: str, new_task_id: str) -> bool:
        """Compare-and-set: a `queued` entry still naming `old_task_id` (and not cancelled) now names `new_task_id`
        (its message was lost: reserved by a worker that died before starting it); its pickups stay as they were.
        False when someone else changed it first."""
        ...

    def request_cancel(self, session_id: str) -> FleetEntry | None:
        """Mark the session for cancellation; its entry (None when the fleet never had it)."""
        ...

    def add_branch(self, session_id: str, branch: str, task_id: str, queue: str, line: str) -> BranchEntry:
        """Record a branch handed to the fleet (state `queued`); an entry left by an earlier run of the same fan-out
        is replaced (its runner, finding another task id, stops)."""
        ...

    def get_branch(self, session_id: str, branch: str) -> BranchEntry | None:
        """The branch's entry, None when the fleet never had it."""
        ...

    def branches(self, session_id: str) -> list[BranchEntry]:
        """Every branch entry of the session, most recently changed first."""
        ...

    def claim_branch(self, session_id: str, branch: str, task_id: str, worker: str) -> BranchEntry | None:
        """Compare-and-set: a `queued` entry naming `task_id` goes `running` on `worker`; None when it is not
        (already taken, replaced or cancelled)."""
        ...

    def finish_branch(self, session_id: str, branch: str, task_id: str, result: Mapping[str, Any]) -> bool:
        """Compare-and-set: a `running` entry naming `task_id` goes `done` with `result`; False when it is not."""
        ...

    def requeue_branch(self, session_id: str, branch: str, old_task_id: str, new_task_id: str, line: str) -> bool:
        """Compare-and-set: a `running` entry naming `old_task_id` goes back to `queued` with `new_task_id` and a
        fresh `line` (one more pickup); False when someone else changed it first."""
        ...

    def resend_branch(self, session_id: str, branch: str, old_task_id: str, new_task_id: str) -> bool:
        """Compare-and-set: a `queued`, not cancelled entry naming `old_task_id` names `new_task_id` instead (its
        message was lost with a worker that had reserved it); False when it is not."""
        ...

    def cancel_branch(self, session_id: str, branch: str) -> BranchEntry | None:
        """Mark the branch as no longer wanted; its entry (None when the fleet never had it)."""
        ...

    def beat(self, worker: WorkerBeat) -> None:
        """Record a worker's heartbeat."""
        ...

    def workers(self) -> list[WorkerBeat]:
        """Every worker's last heartbeat, newest first."""
        ...

    def close(self) -> None:
        """Release connections."""
        ...
