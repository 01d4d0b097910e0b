"""PostgreSQL connection strings: from orchestra.yaml or the environment, shown without their password."""

from __future__ import annotations

import os

from orchestra_core.model.settings import StorageSettings
from orchestra_core.model.store_errors import StoreError

CONNECT_TIMEOUT_S = 5  # an unreachable database fails within this, naming its address
# How long the database waits on a silent client before it drops the connection (and the session locks it
# holds): idle seconds before the first probe, seconds between probes, probes lost.
KEEPALIVE = (5, 2, 3)


def configured_dsn(settings: StorageSettings) -> str:
    """The DSN `storage.dsn` gives, or the value of the variable `storage.dsn_env` names.

    Raises:
        StoreError: Neither (or both) is set, or the variable is unset or empty; the message names the key.
    """
    if settings.dsn and settings.dsn_env:
        raise StoreError("storage: give storage.dsn or storage.dsn_env, not both")
    if settings.dsn_env:
        value = os.environ.get(settings.dsn_env, "").strip()
        if not value:
            raise StoreError(f"storage.dsn_env: the environment variable {settings.dsn_env} is not set")
        return value
    if settings.dsn:
        return settings.dsn
    raise StoreError(
        "storage.dsn: the postgres backend needs storage.dsn (postgresql://user@host/db) or storage.dsn_env "
        "(a variable holding it)"
    )


def display_dsn(dsn: str) -> str:
    """The DSN as messages show it: `postgresql://user@host:port/db`, never the password.

    A DSN psycopg cannot parse is shown as `postgresql://(unparsable DSN)`: even a broken one may hold a password.
    """
    from psycopg.conninfo import conninfo_to_dict

    try:
        parts = conninfo_to_dict(dsn)
    except Exception:
        return "postgresql://(unparsable DSN)"
    user = f"{parts['user']}@" if parts.get("user") else ""
    host = str(parts.get("host") or parts.get("hostaddr") or "")
    port = f":{parts['port']}" if parts.get("port") else ""
    database = str(parts.get("dbname") or "")
    if host.startswith("/"):  # a Unix socket directory
        return f"postgresql://{user}/{database}?host={host}{port and '&port=' + port[1:]}"
    return f"postgresql://{user}{host}{port}/{database}"


def connection_options(application_name: str, *, keepalive: bool = False) -> dict[str, object]:
    """Keyword arguments of every connection: a connect timeout, a name in `pg_stat_activity` and, for a
    connection that holds session locks, TCP keepalives on both ends so a vanished peer is noticed in seconds."""
    options: dict[str, object] = {"connect_timeout": CONNECT_TIMEOUT_S, "application_name": application_name[:63]}
    if keepalive:
        idle, interval, count = KEEPALIVE
        options.update(keepalives=1, keepalives_idle=idle, keepalives_interval=interval, keepalives_count=count)
        options["options"] = (
            f"-c tcp_keepalives_idle={idle} -c tcp_keepalives_interval={interval} -c tcp_keepalives_count={count}"
        )
    return options
