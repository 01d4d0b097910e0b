"""PostgresSessionLocks: one runner per session across machines, by PostgreSQL advisory locks held by the runner's
own connection, so the database frees a lock when its holder's connection dies (however the holder dies)."""

from __future__ import annotations

import hashlib
import os
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import psycopg

from orchestra_adapters.storage.postgres.dsn import connection_options, display_dsn
from orchestra_adapters.storage.postgres.errors import store_error
from orchestra_adapters.storage.postgres.schema import SCHEMA, migrate
from orchestra_core.ports.session_locks import SessionBusyError

# The two-key form of advisory locks: (space, key). Numeric session ids are their own key; others are hashed,
# in a space of their own so the two never collide.
NUMERIC_SPACE = 0x4F52_0001
HASHED_SPACE = 0x4F52_0002
_INT4 = 2**31


def lock_key(session_id: str) -> tuple[int, int]:
    """The advisory lock `(space, key)` of a session."""
    text = str(session_id).strip()
    if text.isdigit() and text.isascii() and int(text) < _INT4:
        return NUMERIC_SPACE, int(text)
    digest = hashlib.blake2b(text.encode("utf-8"), digest_size=4).digest()
    return HASHED_SPACE, int.from_bytes(digest, "big") % _INT4


def default_holder() -> str:
    """Who this process is, as other machines see it in messages and in `orchestra status`."""
    return f"orchestra on {socket.gethostname()} (pid {os.getpid()})"


class PostgresSessionLease:
    """A held session lock: its own database connection, which holds the advisory lock for as long as it lives.

    `watch(on_lost)` checks the connection every few seconds and calls `on_lost` once if it broke (the database
    may then have given the lock to another runner, which must be the only one recording).
    """

    def __init__(self, connection: psycopg.Connection, key: tuple[int, int]) -> None:
        self._connection: psycopg.Connection | None = connection
        self._key = key
        self._guard = threading.Lock()
        self._stop = threading.Event()

    @property
    def held(self) -> bool:
        return self._connection is not None

    def release(self) -> None:
        """Let go of the lock (idempotent): unlock, and close the connection."""
        self._stop.set()
        with self._guard:
            connection, self._connection = self._connection, None
        if connection is None:
            return
        try:
            connection.execute("SELECT pg_advisory_unlock(%s, %s)", self._key)
        except psycopg.Error:
            pass  # the connection is gone, and the lock with it
        finally:
            connection.close()

    def alive(self) -> bool:
        """Whether the connection holding the lock still answers."""
        with self._guard:
            if self._connection is None:
                return False
            try:
                self._connection.execute("SELECT 1")
            except psycopg.Error:
                return False
        return True

    def watch(self, on_lost: Callable[[], Any], interval_s: float = 2.0) -> None:
        """Call `on_lost` (once, in a daemon thread) when the lock's connection breaks before `release`."""

        def check() -> None:
            while not self._stop.wait(interval_s):
                if not self.alive():
                    if not self._stop.is_set():
                        on_lost()
                    return

        threading.Thread(target=check, name="orchestra-lock-watch", daemon=True).start()


class PostgresSessionLocks:
    """Session locks in the PostgreSQL database of the session store (the fleet's).

    `acquire` opens a connection (TCP keepalives on both ends) and takes the session's advisory lock on it without
    waiting; the lock lives as long as that connection. A runner killed with SIGKILL closes it at once; a machine
    that vanishes is noticed by the database's keepalives within about 11 s (5 s idle, then 3 probes 2 s apart).
    The holder (worker, host, pid) is kept in `session_runners`, which also says whether a runner ever took a
    session's lock (SessionLockHistory), from any machine. No CheckoutLocks: in-place checkouts are one machine's.
    """

    def __init__(self, dsn: str, *, holder: str | None = None) -> None:
        self._dsn = dsn
        self.location = display_dsn(dsn)
        self.holder_name = holder or default_holder()
        self._options = connection_options(f"orchestra lock: {self.holder_name}", keepalive=True)
        self._reader: psycopg.Connection | None = None
        self._reader_guard = threading.Lock()
        with self._connect("open the session locks") as connection:
            migrate(connection, self.location)

    def acquire(self, session_id: str) -> PostgresSessionLease:
        """Take the session's lock without waiting.

        Raises:
            SessionBusyError: Another runner holds it (the message names the runner).
            StoreError: The database cannot be reached (the message names it, without a password).
        """
        key = lock_key(session_id)
        connection = self._connect(f"lock session {session_id}")
        try:
            row = connection.execute("SELECT pg_try_advisory_lock(%s, %s)", key).fetchone()
            if not (row and row[0]):
                connection.close()
                raise SessionBusyError(
                    f"session {session_id} is being run by {self.holder(session_id) or 'another runner'}; "
                    "wait for it to end or cancel it (orchestra cancel), then resume"
                )
            connection.execute(
                f"INSERT INTO {SCHEMA}.session_runners (session_id, holder, acquired_at_ms) "
                "VALUES (%s, %s, (extract(epoch from clock_timestamp()) * 1000)::bigint) "
                "ON CONFLICT (session_id) DO UPDATE SET holder = excluded.holder, acquired_at_ms = excluded.acquired_at_ms",
                (str(session_id), self.holder_name),
            )
        except psycopg.Error as error:
            connection.close()
            raise store_error(error, self.location, f"lock session {session_id}") from None
        return PostgresSessionLease(connection, key)

    def holder(self, session_id: str) -> str | None:
        """The runner holding the session's lock (as it named itself), or None when it is free."""
        space, key = lock_key(session_id)
        with self._reading(f"read the lock of session {session_id}") as connection:
            row = connection.execute(
                f"SELECT (SELECT holder FROM {SCHEMA}.session_runners WHERE session_id = %s) FROM pg_locks "
                "WHERE locktype = 'advisory' AND classid = %s::bigint::oid AND objid = %s::bigint::oid "
                "AND objsubid = 2 AND granted LIMIT 1",
                (str(session_id), space, key),
            ).fetchone()
        if row is None:
            return None
        return str(row[0] or "another runner")

    def held_sessions(self) -> dict[str, str]:
        """Every session whose lock is held now, with its holder (for `orchestra status`)."""
        with self._reading("read the session locks") as connection:
            rows = connection.execute(
                f"SELECT r.session_id, r.holder FROM {SCHEMA}.session_runners r JOIN pg_locks l ON l.locktype = "
                "'advisory' AND l.objsubid = 2 AND l.granted AND l.classid = %s::bigint::oid "
                "AND r.session_id ~ '^[0-9]+$' AND l.objid = r.session_id::bigint::oid",
                (NUMERIC_SPACE,),
            ).fetchall()
        return {str(session): str(holder) for session, holder in rows}

    def ever_held(self, session_id: str) -> bool:
        """Whether a runner (on any machine sharing the database) ever took the session's lock."""
        with self._reading(f"read the lock of session {session_id}") as connection:
            row = connection.execute(
                f"SELECT 1 FROM {SCHEMA}.session_runners WHERE session_id = %s", (str(session_id),)
            ).fetchone()
        return row is not None

    def close(self) -> None:
        """Close the connection used for reading locks (held leases keep theirs)."""
        with self._reader_guard:
            reader, self._reader = self._reader, None
        if reader is not None:
            reader.close()

    @contextmanager
    def _reading(self, action: str) -> Iterator[psycopg.Connection]:
        """One connection, kept, for reading who holds what (opened again after an error)."""
        with self._reader_guard:
            if self._reader is None or self._reader.closed:
                self._reader = self._connect(action)
            try:
                yield self._reader
            except psycopg.Error as error:
                self._reader.close()
                self._reader = None
                raise store_error(error, self.location, action) from None

    def _connect(self, action: str) -> psycopg.Connection:
        try:
            return psycopg.connect(self._dsn, autocommit=True, **self._options)  # type: ignore[arg-type]
        except psycopg.Error as error:
            raise store_error(error, self.location, action) from None


__all__ = ["PostgresSessionLease", "PostgresSessionLocks", "lock_key"]
