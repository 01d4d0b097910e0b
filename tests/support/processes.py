"""Finding live processes through /proc: by process group, or by a variable in their environment (which
reaches into pid namespaces, where `$$` means nothing to the host). Zombies are dead and not counted."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from pathlib import Path

PROC = Path("/proc")


def _stat(pid: str) -> tuple[str, int] | None:
    """A process's state letter and process group, or None when it is gone."""
    try:
        text = (PROC / pid / "stat").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()  # after "pid (comm) "
    return fields[0], int(fields[2])


def described(pids: list[int]) -> list[str]:
    """For a failure message: each process's pid, name, state, parent, group and session, and where it waits."""
    found = []
    for pid in pids:
        with contextlib.suppress(OSError):
            text = (PROC / str(pid) / "stat").read_text(encoding="utf-8", errors="replace")
            fields = text[text.rindex(")") + 2 :].split()
            name = text[text.index("(") + 1 : text.rindex(")")]
            wchan = (PROC / str(pid) / "wchan").read_text(errors="replace")
            found.append(f"{pid} {name} state={fields[0]} ppid={fields[1]} pgid={fields[2]} sid={fields[3]} wchan={wchan}")
    return found


def _pids() -> list[str]:
    return [entry.name for entry in PROC.iterdir() if entry.name.isdigit()]


def alive(pid: int) -> bool:
    stat = _stat(str(pid))
    return stat is not None and stat[0] != "Z"


def group_of(pid: int) -> int:
    stat = _stat(str(pid))
    assert stat is not None, f"process {pid} is gone"
    return stat[1]


def live_group_members(pgid: int) -> list[int]:
    """The live processes of process group `pgid`."""
    found = []
    for pid in _pids():
        stat = _stat(pid)
        if stat is not None and stat[1] == pgid and stat[0] != "Z":
            found.append(int(pid))
    return found


def live_processes_with(variable: str, value: str) -> list[int]:
    """The live processes whose environment has `variable=value`."""
    wanted = f"{variable}={value}".encode()
    found = []
    for pid in _pids():
        with contextlib.suppress(OSError):
            if wanted in (PROC / pid / "environ").read_bytes().split(b"\0") and alive(int(pid)):
                found.append(int(pid))
    return found


def wait_until(condition: Callable[[], bool], seconds: float) -> bool:
    """Poll `condition` until it holds or `seconds` pass; whether it held."""
    deadline = time.monotonic() + seconds
    while True:
        if condition():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)


def wait_for_file(path: Path, seconds: float, still_running: Callable[[], bool] = lambda: True) -> str:
    """The stripped text of `path` once it exists and is not empty (fails after `seconds`)."""
    deadline = time.monotonic() + seconds
    while True:
        if path.is_file() and path.read_text(encoding="utf-8").strip():
            return path.read_text(encoding="utf-8").strip()
        assert still_running(), f"the process ended before {path.name} appeared"
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)


def kill_quietly(pids: list[int], sig: int = 9, *, within: Path | None = None) -> None:
    """Clean-up after a failed test: SIGKILL what is left.

    Pids learned earlier may have ended and been reused (pid_max is often 32768, and a test run starts far
    more processes): with `within`, only a process whose working directory is inside it is killed, so that a
    clean-up never kills another test's process.
    """
    for pid in pids:
        if within is None or works_within(pid, within):
            with contextlib.suppress(OSError):
                os.kill(pid, sig)


def kill_group_quietly(pgid: int, within: Path, sig: int = 9) -> None:
    """SIGKILL process group `pgid` when its leader still works inside `within` (see `kill_quietly`)."""
    if works_within(pgid, within):
        with contextlib.suppress(OSError):
            os.killpg(pgid, sig)


def works_within(pid: int, directory: Path) -> bool:
    """Whether process `pid` is alive with its working directory inside `directory`."""
    try:
        cwd = Path(os.readlink(PROC / str(pid) / "cwd"))
    except OSError:
        return False
    return alive(pid) and cwd.is_relative_to(directory.resolve())
