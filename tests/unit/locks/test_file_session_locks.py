"""FileSessionLocks: one holder per session, named by pid in the refusal, freed when its process dies."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestra_adapters.locks import FileSessionLocks
from orchestra_core.model.errors import OrchestraError
from orchestra_core.ports.session_locks import (
    SessionBusyError,
    SessionLease,
    SessionLockHistory,
    SessionLocks,
)

ROOT = Path(__file__).resolve().parents[3]

_HOLDER = textwrap.dedent(
    """
    import subprocess, sys, time
    from pathlib import Path
    from orchestra_adapters.locks import FileSessionLocks
    FileSessionLocks(Path(sys.argv[1])).acquire(sys.argv[2])
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], close_fds=False)
    print(child.pid, flush=True)
    time.sleep(60)
    """
)


def _busy(session_id: str, pid: int | str) -> str:
    return rf"session {session_id} is being run by another orchestra process \(pid {pid}\); wait for it"


@pytest.fixture
def holder(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], int]]:
    """Another process holding session 7's lock, with a child process that outlives it."""
    process = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(tmp_path / "locks"), "7"], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    grandchild = int(process.stdout.readline())
    try:
        yield process, grandchild
    finally:
        process.kill()
        process.wait(10)
        os.kill(grandchild, signal.SIGKILL)


def test_the_adapter_satisfies_the_port(tmp_path: Path) -> None:
    locks = FileSessionLocks(tmp_path)
    assert isinstance(locks, SessionLocks)
    lease = locks.acquire("1")
    assert isinstance(lease, SessionLease)
    lease.release()


def test_a_second_acquire_in_the_same_process_is_refused_until_the_first_lets_go(tmp_path: Path) -> None:
    locks = FileSessionLocks(tmp_path / "locks")
    first = locks.acquire("7")
    assert locks.lock_path("7") == tmp_path / "locks" / "7.lock"
    with pytest.raises(SessionBusyError, match=_busy("7", os.getpid())):
        locks.acquire("7")
    assert FileSessionLocks(tmp_path / "locks").holder("7") == str(os.getpid())
    other = locks.acquire("8")  # other sessions are not affected
    other.release()
    first.release()
    first.release()  # releasing twice is harmless
    assert locks.holder("7") is None
    locks.acquire("7").release()


def test_a_session_never_locked_has_no_holder_and_gets_no_lock_file(tmp_path: Path) -> None:
    locks = FileSessionLocks(tmp_path / "locks")
    assert locks.holder("9") is None
    assert not (tmp_path / "locks").exists()


def test_a_lock_once_held_is_known_after_it_is_released(tmp_path: Path) -> None:
    locks = FileSessionLocks(tmp_path / "locks")
    assert isinstance(locks, SessionLockHistory) and not locks.ever_held("7")
    locks.acquire("7").release()
    assert locks.ever_held("7") and locks.holder("7") is None and not locks.ever_held("8")


def test_an_uncreatable_lock_file_is_an_error_naming_it(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a directory")
    locks = FileSessionLocks(tmp_path / "file" / "locks")
    with pytest.raises(OrchestraError, match="cannot create the session lock") as caught:
        locks.acquire("7")
    assert str(caught.value).startswith(f"{tmp_path / 'file' / 'locks' / '7.lock'}: cannot create the session lock: ")
    assert not isinstance(caught.value, SessionBusyError)


@pytest.mark.slow
def test_another_process_holding_the_lock_is_named_by_its_pid(
    tmp_path: Path, holder: tuple[subprocess.Popen[str], int]
) -> None:
    process, _ = holder
    locks = FileSessionLocks(tmp_path / "locks")
    for _ in range(2):  # a failing contender leaves the holder's pid in place
        with pytest.raises(SessionBusyError, match=_busy("7", process.pid)):
            locks.acquire("7")
    assert locks.holder("7") == str(process.pid)
    locks.acquire("8").release()


@pytest.mark.slow
def test_a_holder_killed_with_sigkill_frees_the_lock_though_its_child_lives_on(
    tmp_path: Path, holder: tuple[subprocess.Popen[str], int]
) -> None:
    process, grandchild = holder
    locks = FileSessionLocks(tmp_path / "locks")
    assert locks.holder("7") == str(process.pid)
    process.send_signal(signal.SIGKILL)
    process.wait(10)
    os.kill(grandchild, 0)  # still running, and it did not inherit the lock
    assert locks.holder("7") is None
    lease = locks.acquire("7")
    assert (tmp_path / "locks" / "7.pid").read_text(encoding="ascii") == f"{os.getpid()}\n"
    lease.release()
