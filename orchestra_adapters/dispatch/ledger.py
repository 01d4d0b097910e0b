"""PostgresFleetLedger: the fleet's bookkeeping in the session store's database (tables `fleet_sessions`,
`fleet_branches` and `fleet_workers`); every state change is one compare-and-set UPDATE."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from orchestra_adapters.storage.postgres.dsn import connection_options, display_dsn
from orchestra_adapters.storage.postgres.errors import store_error
from orchestra_adapters.storage.postgres.schema import SCHEMA, migrate
from orchestra_core.ports.fleet import BranchEntry, FleetEntry, FleetState, WorkerBeat

_S = SCHEMA
_ENTRY = (
    "SELECT session_id, state, task_id, queue, worker, submission, cancel_requested, pickups, updated_at "
    f"FROM {_S}.fleet_sessions"
)
_RETURNING = "RETURNING session_id, state, task_id, queue, worker, submission, cancel_requested, pickups, updated_at"
_BRANCH_COLUMNS = "session_id, branch, state, task_id, queue, line, worker, result, cancel_requested, pickups, updated_at"
_BRANCH = f"SELECT {_BRANCH_COLUMNS} FROM {_S}.fleet_branches"


class PostgresFleetLedger:
    """The FleetLedger port in PostgreSQL; one connection behind a lock (the ledger is written a few times per
    session, not per turn)."""

    def __init__(self, dsn: str, *, application_name: str = "orchestra fleet") -> None:
        self._dsn = dsn
        self.location = display_dsn(dsn)
        self._options = connection_options(application_name)
        self._guard = threading.Lock()
        self._connection: psycopg.Connection | None = None
        with self._use("open the fleet ledger") as connection:
            migrate(connection, self.location)

    def add(self, session_id: str, task_id: str, queue: str, submission: Mapping[str, Any]) -> FleetEntry:
        with self._use(f"record session {session_id} in the fleet") as connection:
            row = connection.execute(
                f"INSERT INTO {_S}.fleet_sessions (session_id, state, task_id, queue, submission) "
                "VALUES (%s, 'queued', %s, %s, %s) ON CONFLICT (session_id) DO UPDATE SET state = 'queued', "
                "task_id = excluded.task_id, queue = excluded.queue, submission = excluded.submission, worker = '', "
                f"cancel_requested = false, updated_at = now() {_RETURNING}",
                (session_id, task_id, queue, Jsonb(dict(submission))),
            ).fetchone()
        assert row is not None
        return _entry(row)

    def get(self, session_id: str) -> FleetEntry | None:
        with self._use(f"read session {session_id} in the fleet") as connection:
            row = connection.execute(f"{_ENTRY} WHERE session_id = %s", (session_id,)).fetchone()
        return _entry(row) if row else None

    def entries(self, *, states: Sequence[FleetState] = ("queued", "running", "done"), limit: int = 200) -> list[FleetEntry]:
        with self._use("list the fleet's sessions") as connection:
            rows = connection.execute(
                f"{_ENTRY} WHERE state = ANY(%s) ORDER BY updated_at DESC LIMIT %s", (list(states), limit)
            ).fetchall()
        return [_entry(row) for row in rows]

    def take(self, session_id: str, worker: str) -> FleetEntry | None:
        return self._run_on(session_id, worker, "state = 'queued'", "take")

    def start(self, session_id: str, worker: str) -> FleetEntry | None:
        return self._run_on(session_id, worker, "state <> 'done'", "start")

    def _run_on(self, session_id: str, worker: str, when: str, verb: str) -> FleetEntry | None:
        """The entry set `running` on `worker` where the `when` condition (a constant) holds; None where it does
        not."""
        with self._use(f"{verb} session {session_id} in the fleet") as connection:
            row = connection.execute(
                f"UPDATE {_S}.fleet_sessions SET state = 'running', worker = %s, updated_at = now() "
                f"WHERE session_id = %s AND {when} {_RETURNING}",
                (worker, session_id),
            ).fetchone()
        return _entry(row) if row else None

    def finish(self, session_id: str, worker: str) -> None:
        with self._use(f"finish session {session_id} in the fleet") as connection:
            connection.execute(
                f"UPDATE {_S}.fleet_sessions SET state = 'done', worker = CASE WHEN %s = '' THEN worker ELSE %s END, "
                "updated_at = now() WHERE session_id = %s",
                (worker, worker, session_id),
            )

    def requeue(self, session_id: str, old_task_id: str, new_task_id: str) -> bool:
        return self._updated(
            f"requeue session {session_id}",
            f"UPDATE {_S}.fleet_sessions SET state = 'queued', task_id = %s, pickups = pickups + 1, "
            "updated_at = now() WHERE session_id = %s AND state = 'running' AND task_id = %s RETURNING 1",
            (new_task_id, session_id, old_task_id),
        )

    def resend(self, session_id: str, old_task_id: str, new_task_id: str) -> bool:
        return self._updated(
            f"resend session {session_id}",
            f"UPDATE {_S}.fleet_sessions SET task_id = %s, updated_at = now() WHERE session_id = %s AND "
            "state = 'queued' AND task_id = %s AND NOT cancel_requested RETURNING 1",
            (new_task_id, session_id, old_task_id),
        )

    def request_cancel(self, session_id: str) -> FleetEntry | None:
        with self._use(f"cancel session {session_id}") as connection:
            row = connection.execute(
                f"UPDATE {_S}.fleet_sessions SET cancel_requested = true, updated_at = now() "
                f"WHERE session_id = %s {_RETURNING}",
                (session_id,),
            ).fetchone()
        return _entry(row) if row else None

    def add_branch(self, session_id: str, branch: str, task_id: str, queue: str, line: str) -> BranchEntry:
        with self._use(f"record branch {branch} of session {session_id} in the fleet") as connection:
            row = connection.execute(
                f"INSERT INTO {_S}.fleet_branches (session_id, branch, state, task_id, queue, line) "
                "VALUES (%s, %s, 'queued', %s, %s, %s) ON CONFLICT (session_id, branch) DO UPDATE SET "
                "state = 'queued', task_id = excluded.task_id, queue = excluded.queue, line = excluded.line, "
                "worker = '', result = '{}', cancel_requested = false, pickups = 0, updated_at = now() "
                f"RETURNING {_BRANCH_COLUMNS}",
                (session_id, branch, task_id, queue, line),
            ).fetchone()
        assert row is not None
        return _branch(row)

    def get_branch(self, session_id: str, branch: str) -> BranchEntry | None:
        with self._use(f"read branch {branch} of session {session_id} in the fleet") as connection:
            row = connection.execute(f"{_BRANCH} WHERE session_id = %s AND branch = %s", (session_id, branch)).fetchone()
        return _branch(row) if row else None

    def branches(self, session_id: str) -> list[BranchEntry]:
        with self._use(f"list the fleet's branches of session {session_id}") as connection:
            rows = connection.execute(
                f"{_BRANCH} WHERE session_id = %s ORDER BY updated_at DESC", (session_id,)
            ).fetchall()
        return [_branch(row) for row in rows]

    def claim_branch(self, session_id: str, branch: str, task_id: str, worker: str) -> BranchEntry | None:
        with self._use(f"claim branch {branch} of session {session_id}") as connection:
            row = connection.execute(
                f"UPDATE {_S}.fleet_branches SET state = 'running', worker = %s, updated_at = now() "
                "WHERE session_id = %s AND branch = %s AND state = 'queued' AND task_id = %s "
                f"AND NOT cancel_requested RETURNING {_BRANCH_COLUMNS}",
                (worker, session_id, branch, task_id),
            ).fetchone()
        return _branch(row) if row else None

    def finish_branch(self, session_id: str, branch: str, task_id: str, result: Mapping[str, Any]) -> bool:
        return self._updated(
            f"finish branch {branch} of session {session_id}",
            f"UPDATE {_S}.fleet_branches SET state = 'done', result = %s, updated_at = now() "
            "WHERE session_id = %s AND branch = %s AND state = 'running' AND task_id = %s RETURNING 1",
            (Jsonb(dict(result)), session_id, branch, task_id),
        )

    def requeue_branch(self, session_id: str, branch: str, old_task_id: str, new_task_id: str, line: str) -> bool:
        return self._updated(
            f"requeue branch {branch} of session {session_id}",
            f"UPDATE {_S}.fleet_branches SET state = 'queued', task_id = %s, line = %s, worker = '', "
            "pickups = pickups + 1, updated_at = now() "
            "WHERE session_id = %s AND branch = %s AND state = 'running' AND task_id = %s RETURNING 1",
            (new_task_id, line, session_id, branch, old_task_id),
        )

    def resend_branch(self, session_id: str, branch: str, old_task_id: str, new_task_id: str) -> bool:
        return self._updated(
            f"resend branch {branch} of session {session_id}",
            f"UPDATE {_S}.fleet_branches SET task_id = %s, updated_at = now() WHERE session_id = %s AND "
            "branch = %s AND state = 'queued' AND task_id = %s AND NOT cancel_requested RETURNING 1",
            (new_task_id, session_id, branch, old_task_id),
        )

    def cancel_branch(self, session_id: str, branch: str) -> BranchEntry | None:
        with self._use(f"cancel branch {branch} of session {session_id}") as connection:
            row = connection.execute(
                f"UPDATE {_S}.fleet_branches SET cancel_requested = true, updated_at = now() "
                f"WHERE session_id = %s AND branch = %s RETURNING {_BRANCH_COLUMNS}",
                (session_id, branch),
            ).fetchone()
        return _branch(row) if row else None

    def beat(self, worker: WorkerBeat) -> None:
        with self._use(f"record the heartbeat of {worker.name}") as connection:
            connection.execute(
                f"INSERT INTO {_S}.fleet_workers (name, queues, concurrency, running, started_at, beat_at) "
                "VALUES (%s, %s, %s, %s, COALESCE(%s, now()), now()) ON CONFLICT (name) DO UPDATE SET "
                "queues = excluded.queues, concurrency = excluded.concurrency, running = excluded.running, "
                "beat_at = now()",
                (worker.name, ",".join(worker.queues), worker.concurrency, Jsonb(dict(worker.running)), worker.started_at),
            )

    def workers(self) -> list[WorkerBeat]:
        with self._use("list the fleet's workers") as connection:
            rows = connection.execute(
                f"SELECT name, queues, concurrency, running, started_at, beat_at FROM {_S}.fleet_workers "
                "ORDER BY beat_at DESC"
            ).fetchall()
        return [
            WorkerBeat(name, tuple(q for q in queues.split(",") if q), concurrency, running or {}, started, beat)
            for name, queues, concurrency, running, started, beat in rows
        ]

    def close(self) -> None:
        with self._guard:
            connection, self._connection = self._connection, None
        if connection is not None:
            connection.close()

    def _updated(self, action: str, statement: str, parameters: Sequence[Any]) -> bool:
        """Run a compare-and-set UPDATE (ending RETURNING 1); whether it changed a row."""
        with self._use(action) as connection:
            return connection.execute(statement, parameters).fetchone() is not None

    @contextmanager
    def _use(self, action: str) -> Iterator[psycopg.Connection]:
        with self._guard:
            try:
                if self._connection is None or self._connection.closed:
                    self._connection = psycopg.connect(self._dsn, autocommit=True, **self._options)  # type: ignore[arg-type]
                yield self._connection
            except psycopg.Error as error:
                if self._connection is not None:
                    self._connection.close()
                    self._connection = None
                raise store_error(error, self.location, action) from None


def _entry(row: Sequence[Any]) -> FleetEntry:
    session_id, state, task_id, queue, worker, submission, cancel, pickups, updated = row
    return FleetEntry(session_id, state, task_id, queue, worker, submission or {}, bool(cancel), pickups, updated)


def _branch(row: Sequence[Any]) -> BranchEntry:
    session_id, branch, state, task_id, queue, line, worker, result, cancel, pickups, updated = row
    return BranchEntry(session_id, branch, state, task_id, queue, line, worker, result or {}, bool(cancel), pickups, updated)
