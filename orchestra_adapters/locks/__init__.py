"""Session locks on this machine: FileSessionLocks implements the SessionLocks port."""

from orchestra_adapters.locks.file_session_locks import FileSessionLease, FileSessionLocks

__all__ = ["FileSessionLease", "FileSessionLocks"]
