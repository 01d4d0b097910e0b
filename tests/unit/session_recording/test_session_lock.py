"""The per-session lock: one holder at a time, the holder's pid in the refusal, free again once released."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from orchestra_cli.runtime.session_lock import SessionBusyError, SessionLock


def test_a_second_holder_is_refused_with_the_first_ones_pid_until_it_lets_go(tmp_path: Path) -> None:
    first, second = SessionLock(tmp_path, "7"), SessionLock(tmp_path, "7")
    first.acquire()
    assert first.path == tmp_path / ".orchestra" / "locks" / "7.lock"
    with pytest.raises(
        SessionBusyError, match=rf"session 7 is being run by another orchestra process \(pid {os.getpid()}\)"
    ):
        second.acquire()
    other = SessionLock(tmp_path, "8")
    other.acquire()  # other sessions are not affected
    other.release()
    first.release()
    first.release()  # releasing twice is harmless
    second.acquire()
    assert first.path.read_text(encoding="ascii") == f"{os.getpid()}\n"
    second.release()
