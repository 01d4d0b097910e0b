"""SQLite store reliability: killed writers, corrupt, locked and read-only files, concurrent processes."""

from __future__ import annotations

import os
import random
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from orchestra_adapters.storage.sqlite_store import SqliteSessionStore
from orchestra_core.model.store_errors import (
    StoreCorruptError,
    StoreError,
    StoreLockedError,
    StoreReadOnlyError,
)
from orchestra_core.ports.session_store import SessionMetadata
from orchestra_core.session import api
from orchestra_core.session.cursor import CHECKPOINT_TYPE_ID

WORKER = Path(__file__).with_name("store_worker.py")
META = SessionMetadata(pipeline="p")


def _worker(*args: object) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(WORKER), *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _new_session(path: Path) -> str:
    with SqliteSessionStore(path) as store:
        return store.create_session(META).session_id


def _checkpoint_by_scan(store: SqliteSessionStore, session: str) -> str | None:
    return next((t.turn_id for t in api.history(store, session) if t.type_id == CHECKPOINT_TYPE_ID), None)


def _integrity(path: Path) -> str:
    connection = sqlite3.connect(path)
    try:
        return connection.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        connection.close()


@pytest.mark.slow
def test_a_writer_killed_at_random_moments_leaves_a_readable_resumable_store(tmp_path: Path) -> None:
    path = tmp_path / ".orchestra" / "orchestra.db"
    session = _new_session(path)
    rng = random.Random(4)
    committed: list[str] = []
    for _round in range(4):
        worker = _worker("append", path, session, 0, 7)
        assert worker.stdout is not None
        for _ in range(rng.randint(30, 250)):
            committed.append(worker.stdout.readline().strip())
        worker.kill()
        worker.wait()
        assert _integrity(path) == "ok"
        with SqliteSessionStore(path) as store:
            history = {t.turn_id for t in api.history(store, session)}
            assert set(committed) <= history  # every reported commit survived the kill
            latest = store.latest_checkpoint(session)
            assert latest is not None and latest.turn_id == _checkpoint_by_scan(store, session)
            assert api.latest_checkpoint(store, session) is not None


def test_a_file_that_is_not_a_database_gives_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "orchestra.db"
    path.write_bytes(b"this is not an sqlite database, just some text " * 100)
    with pytest.raises(StoreCorruptError, match=rf"{path}.*not an SQLite database"):
        SqliteSessionStore(path)


def test_a_damaged_database_gives_a_clear_error_not_a_driver_traceback(tmp_path: Path) -> None:
    path = tmp_path / "orchestra.db"
    with SqliteSessionStore(path) as store:
        session = store.create_session(META).session_id
        for n in range(300):
            store.append(session, "t.E", 1, {1: n, 2: "y" * 300})
    data = bytearray(path.read_bytes())
    for offset in range(4096, len(data), 4096):  # smash every page after the first
        data[offset + 8 : offset + 40] = b"\xff" * 32
    path.write_bytes(bytes(data))
    with pytest.raises(StoreCorruptError, match=str(path)), SqliteSessionStore(path) as store:
        list(api.history(store, session))


@pytest.mark.parametrize("damaged", [None, "two", 2.5, -1])
def test_a_damaged_schema_version_is_reported_as_corruption(tmp_path: Path, damaged: object) -> None:
    path = tmp_path / "orchestra.db"
    _new_session(path)
    connection = sqlite3.connect(path)
    connection.execute("DROP TABLE schema_version")  # as a damaged page reads: no constraint holds
    connection.execute("CREATE TABLE schema_version (version)")
    connection.execute("INSERT INTO schema_version VALUES (?)", (damaged,))
    connection.commit()
    connection.close()
    with pytest.raises(StoreCorruptError, match=rf"{path}.*schema version is damaged"):
        SqliteSessionStore(path)


@pytest.fixture(scope="module")
def intact_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, str]:
    path = tmp_path_factory.mktemp("intact") / "orchestra.db"
    with SqliteSessionStore(path) as store:
        session = store.create_session(META).session_id
        for n in range(200):
            store.append(session, "t.E", 1, {1: n, 2: "y" * 300})
    return path.read_bytes(), session


@settings(
    max_examples=80,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    damage=st.lists(
        st.tuples(st.integers(100, 10**6), st.binary(min_size=1, max_size=32)), min_size=1, max_size=12
    )
)
def test_any_damage_to_the_file_is_a_store_error_or_harmless(
    tmp_path: Path, intact_store: tuple[bytes, str], damage: list[tuple[int, bytes]]
) -> None:
    original, session = intact_store
    data = bytearray(original)
    for offset, garbage in damage:
        start = offset % (len(data) - len(garbage))
        data[start : start + len(garbage)] = garbage
    path = tmp_path / f"damaged-{abs(hash(tuple(damage)))}.db"
    path.write_bytes(bytes(data))
    try:
        with SqliteSessionStore(path) as store:
            list(api.history(store, session))
            store.list_sessions()
            store.latest_checkpoint(session)
            store.append(session, "t.E", 1, {1: 1})
    except StoreError as error:
        assert str(path) in str(error)


def test_a_write_lock_held_beyond_the_busy_timeout_gives_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "orchestra.db"
    session = _new_session(path)
    holder = _worker("lock", path, 30)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        with SqliteSessionStore(path, busy_timeout_s=0.2) as store:
            assert store.get_session(session).turn_count == 0  # readers are not blocked
            with pytest.raises(StoreLockedError, match=rf"{path}.*another process holds"):
                store.append(session, "t.E", 1, {1: 1})
    finally:
        holder.kill()
        holder.wait()
    with SqliteSessionStore(path) as store:
        assert store.append(session, "t.E", 1, {1: 1}).depth == 0


def _read_only_runner() -> list[str]:
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: a read-only file cannot be simulated")
    caps = "-dac_override,-dac_read_search"
    return ["setpriv", f"--inh-caps={caps}", f"--bounding-set={caps}"]


def test_a_read_only_file_reads_but_refuses_writes_with_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "orchestra.db"
    session = _new_session(path)
    path.chmod(0o444)
    code = (
        "import sys; sys.path.insert(0, sys.argv[2])\n"
        "from orchestra_adapters.storage.sqlite_store import SqliteSessionStore\n"
        "from orchestra_core.model.store_errors import StoreError\n"
        "store = SqliteSessionStore(sys.argv[1])\n"
        "print('turns', store.get_session(sys.argv[3]).turn_count)\n"
        "try:\n    store.append(sys.argv[3], 't.E', 1, {1: 1})\n"
        "except StoreError as error:\n    print(type(error).__name__, error)\n"
    )
    root = Path(__file__).resolve().parents[3]
    command = [*_read_only_runner(), sys.executable, "-c", code, str(path), str(root), session]
    result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    lines = result.stdout.splitlines()
    assert lines[0] == "turns 0", result.stderr
    assert lines[1].startswith(f"{StoreReadOnlyError.__name__} session store {path}")


@pytest.mark.slow
def test_two_processes_appending_at_once_do_not_interfere(tmp_path: Path) -> None:
    path = tmp_path / "orchestra.db"
    own = [_new_session(path), _new_session(path)]
    shared = _new_session(path)
    workers = [_worker("append", path, session, 150, 10) for session in (*own, shared, shared)]
    for worker in workers:
        _out, err = worker.communicate(timeout=120)
        assert worker.returncode == 0, err
    with SqliteSessionStore(path) as store:
        for session in own:
            events = [t.data[1] for t in api.history(store, session) if t.type_id == "test.Event"]
            assert events == sorted(events, reverse=True) and len(events) == 135
        assert store.get_session(shared).turn_count == 300
        assert store.latest_checkpoint(shared).turn_id == _checkpoint_by_scan(store, shared)


@pytest.mark.slow
def test_processes_creating_a_new_store_at_once_all_open_it(tmp_path: Path) -> None:
    # Switching a new file to WAL answers "database is locked" at once while another process does it.
    for round_number in range(6):
        db, go = tmp_path / f"r{round_number}" / "orchestra.db", tmp_path / f"go{round_number}"
        workers = [_worker("open", db, go) for _ in range(3)]
        time.sleep(0.3)  # let them start and wait for the signal
        go.touch()
        for worker in workers:
            out, err = worker.communicate(timeout=60)
            assert worker.returncode == 0 and out == "opened\n", err
