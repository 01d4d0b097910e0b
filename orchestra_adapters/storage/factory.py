"""open_session_store: the SessionStore that orchestra.yaml's `storage:` section asks for."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from orchestra_core.model.layout import ProjectLayout
from orchestra_core.model.settings import StorageSettings
from orchestra_core.model.store_errors import StoreError
from orchestra_core.ports.clock import Clock
from orchestra_core.ports.session_store import SessionStore

CXDB_BINARY_PORT = 9009
CXDB_HTTP_PORT = 9010


def open_session_store(
    settings: StorageSettings, project_root: Path, *, clock: Clock | None = None
) -> SessionStore:
    """Open the configured store: SQLite at `.orchestra/orchestra.db` by default, a CXDB server, or a PostgreSQL
    database (`storage.dsn`, or the variable `storage.dsn_env` names; its schema is created on first use).

    `storage.path` may be relative (to the project root) or start with `~`. For CXDB, `storage.addr`
    (binary protocol, host:port) and `storage.url` (HTTP) default to each other's host on the standard
    ports 9009 and 9010. A CXDB store connects on first use.

    Raises:
        StoreError: Unknown backend, CXDB without an address, or a store that cannot be opened.
    """
    if settings.backend == "sqlite":
        from orchestra_adapters.storage.sqlite_store import SqliteSessionStore

        return SqliteSessionStore(sqlite_path(settings, project_root), clock=clock)
    if settings.backend == "cxdb":
        from orchestra_adapters.storage.cxdb.store import CxdbSessionStore

        addr, url = cxdb_endpoints(settings)
        return CxdbSessionStore(addr, url, clock=clock)
    if settings.backend == "postgres":
        from orchestra_adapters.storage.postgres.dsn import configured_dsn
        from orchestra_adapters.storage.postgres.store import PostgresSessionStore

        return PostgresSessionStore(configured_dsn(settings), clock=clock)
    raise StoreError(f"storage.backend: unknown backend {settings.backend!r} (use sqlite, cxdb or postgres)")


def store_location(settings: StorageSettings, project_root: Path) -> tuple[str, bool]:
    """Where the configured store is, and whether it is there yet: the SQLite file (which opening the store
    would create), or a CXDB server (there as far as opening goes; it is reached on first use).

    Commands that only read or continue sessions (status, attach, resume, replay) open the store only when it
    is there, so they never create one.
    """
    if settings.backend == "sqlite":
        path = sqlite_path(settings, project_root)
        return str(path), path.is_file()
    if settings.backend == "postgres":
        return postgres_location(settings), True
    return str(settings.url or settings.addr or ""), True


def postgres_location(settings: StorageSettings) -> str:
    """The configured PostgreSQL database as messages show it (no password), or the key that should name it."""
    from orchestra_adapters.storage.postgres.dsn import configured_dsn, display_dsn

    try:
        return display_dsn(configured_dsn(settings))
    except StoreError:
        return f"postgres ({'$' + settings.dsn_env if settings.dsn_env else 'storage.dsn unset'})"


def sqlite_path(settings: StorageSettings, project_root: Path) -> Path:
    """Where the SQLite store lives for these settings."""
    if not settings.path:
        return ProjectLayout(project_root).store_path
    path = Path(settings.path).expanduser()
    return path if path.is_absolute() else project_root / path


def cxdb_endpoints(settings: StorageSettings) -> tuple[str, str]:
    """`(addr, url)` for CXDB, each derived from the other when only one is given.

    Raises:
        StoreError: Neither `storage.addr` nor `storage.url` is set.
    """
    addr, url = settings.addr, settings.url
    if not addr and not url:
        raise StoreError(
            "storage: the cxdb backend needs storage.addr (host:9009) and/or storage.url (http://host:9010)"
        )
    if not addr:
        host = urlsplit(str(url)).hostname or "localhost"
        addr = f"{_bracketed(host)}:{CXDB_BINARY_PORT}"
    if not url:
        host = addr.rsplit(":", 1)[0] if addr.count(":") == 1 or addr.startswith("[") else addr
        url = f"http://{host}:{CXDB_HTTP_PORT}"
    return addr, url


def _bracketed(host: str) -> str:
    return f"[{host}]" if ":" in host else host
