"""`orchestra doctor`'s store checks: reachable and writable, the type bundle published, the schema version."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from orchestra_cli.doctor_check import ERROR, OK, WARNING, Check


def store_checks(container: Any) -> list[Check]:
    """Check the configured store; a SQLite store that does not exist yet is not created."""
    from orchestra_adapters.storage.factory import sqlite_path
    from orchestra_adapters.storage.sqlite_schema import LATEST_VERSION, read_schema_version
    from orchestra_core.model.store_errors import StoreError

    settings = container.settings().storage
    schema_before = None
    if settings.backend == "sqlite":
        path = sqlite_path(settings, Path(container.project_root()))
        if not path.exists():
            return [_future_store(path), Check("type bundle", OK, "published by the first run")]
        schema_before = read_schema_version(path)
    try:
        store = container.session_store()
    except StoreError as error:
        return [Check("store", ERROR, str(error))]
    try:
        checks = _use(store)
    finally:
        store.close()
    if schema_before is not None and checks[0].status == OK:
        migrated = f" (migrated from {schema_before})" if schema_before < LATEST_VERSION else ""
        checks.append(Check("schema", OK, f"version {LATEST_VERSION}{migrated}"))
    if settings.backend == "postgres" and checks[0].status == OK:
        checks += _postgres_checks(container)
    return checks


def _postgres_checks(container: Any) -> list[Check]:
    """A PostgreSQL store's schema version, and its session locks: one taken, seen and let go."""
    import uuid

    from orchestra_adapters.storage.postgres.schema import LATEST_VERSION
    from orchestra_core.model.errors import OrchestraError

    checks = [Check("schema", OK, f"version {LATEST_VERSION} (schema orchestra)")]
    probe = f"doctor-{uuid.uuid4().hex[:12]}"
    try:
        locks = container.session_locks()
        lease = locks.acquire(probe)
        seen = locks.holder(probe)
        lease.release()
        free = locks.holder(probe) is None
    except OrchestraError as error:
        return [*checks, Check("session locks", ERROR, str(error))]
    if not seen or not free:
        return [*checks, Check("session locks", ERROR, "an advisory lock taken was not seen held, then free")]
    return [*checks, Check("session locks", OK, "advisory locks held by each runner's connection")]


def _use(store: Any) -> list[Check]:
    from orchestra_core.model.store_errors import StoreError

    try:
        store.list_sessions(limit=1)
    except StoreError as error:
        return [Check("store", ERROR, f"cannot read: {error}")]
    try:
        store.put_blob(b"")
    except StoreError as error:
        return [Check("store", ERROR, f"readable but not writable: {error}")]
    return [Check("store", OK, f"{store.location}: readable and writable"), _bundle(store)]


def _bundle(store: Any) -> Check:
    from orchestra_core.model.store_errors import StoreError
    from orchestra_core.session.api import publish_types
    from orchestra_core.session.bundle import bundle_bytes, bundle_id

    name = bundle_id()
    try:
        stored = store.get_bundle(name)
        if stored is None:
            publish_types(store)
            return Check("type bundle", OK, f"{name} was missing; published it now")
    except StoreError as error:
        return Check("type bundle", ERROR, f"{name}: {error}")
    if stored != bundle_bytes():
        return Check("type bundle", WARNING, f"{name} is stored with different bytes")
    return Check("type bundle", OK, f"{name} published")


def _future_store(path: Path) -> Check:
    """A store that the first run will create: is there a writable directory for it?"""
    existing = path.parent
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not os.access(existing, os.W_OK | os.X_OK):
        return Check("store", ERROR, f"{path} cannot be created: {existing} is not writable")
    return Check("store", OK, f"{path} (sqlite) does not exist yet; the first run creates it")
