"""Session locks: FileSessionLocks on this machine; PostgresSessionLocks (postgres_session_locks, imported on its
own: it needs psycopg) across the machines sharing a PostgreSQL store."""

from orchestra_adapters.locks.file_session_locks import FileSessionLease, FileSessionLocks

__all__ = ["FileSessionLease", "FileSessionLocks"]
