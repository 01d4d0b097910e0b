"""The command runner's process groups end with the command, its timeout, or the runner itself: a runner killed
with SIGKILL (from a worker thread's call, as stages run) leaves no process of the command behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from orchestra_adapters.process.command_runner import SubprocessCommandRunner
from orchestra_adapters.process.supervised import spawn_supervised
from tests.support.processes import (
    alive,
    group_of,
    kill_quietly,
    live_group_members,
    live_processes_with,
    wait_for_file,
    wait_until,
)
from tests.support.sandbox import needs_bwrap

# A runner in its own process: the command runs from a worker thread while the main thread waits.
RUNNER = textwrap.dedent(
    """
    import sys, threading
    from orchestra_adapters.process.command_runner import SubprocessCommandRunner
    from orchestra_adapters.process.sandbox import BubblewrapCommandRunner, find_bwrap

    kind, cwd, command = sys.argv[1:4]
    runner = SubprocessCommandRunner() if kind == "none" else BubblewrapCommandRunner(find_bwrap())
    worker = threading.Thread(target=lambda: runner.run(command, cwd=cwd, writable=[cwd]))
    worker.start()
    worker.join()
    """
)
MARK = "ORCHESTRA_TEST_MARK"


def start_runner(kind: str, cwd: Path, command: str, mark: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, MARK: mark}
    return subprocess.Popen(
        [sys.executable, "-c", RUNNER, kind, str(cwd), command], env=env, start_new_session=True
    )


def test_the_command_leads_its_own_process_group(tmp_path: Path) -> None:
    result = SubprocessCommandRunner().run("ps -o pgid= -p $$; echo $$", cwd=str(tmp_path))
    pgid, pid = result.stdout.split()
    assert pgid == pid and int(pgid) != os.getpgrp()


@pytest.mark.parametrize("kind", ["none", pytest.param("bubblewrap", marks=needs_bwrap())])
def test_a_runner_killed_mid_command_leaves_nothing_of_it_alive(tmp_path: Path, kind: str) -> None:
    mark = uuid.uuid4().hex
    command = "echo $$ > pid; sleep 30 & (sleep 30; touch finished) & wait"
    runner = start_runner(kind, tmp_path, command, mark)
    try:
        wait_for_file(tmp_path / "pid", 30, lambda: runner.poll() is None)
        assert wait_until(lambda: len(live_processes_with(MARK, mark)) >= 4, 5)  # sh, sleep, subshell, sleep
        if kind == "none":
            group = group_of(int((tmp_path / "pid").read_text()))
            assert group != runner.pid and live_group_members(group)
        os.kill(runner.pid, signal.SIGKILL)
        runner.wait(10)
        assert wait_until(lambda: not live_processes_with(MARK, mark), 2), live_processes_with(MARK, mark)
        if kind == "none":
            assert live_group_members(group) == []
        assert not (tmp_path / "finished").exists()
    finally:
        kill_quietly(live_processes_with(MARK, mark))


def test_a_command_that_signals_its_own_group_does_not_disarm_the_watchdog(tmp_path: Path) -> None:
    mark = uuid.uuid4().hex
    command = "trap '' TERM; kill -s TERM 0; echo $$ > pid; sleep 30"
    runner = start_runner("none", tmp_path, command, mark)
    try:
        wait_for_file(tmp_path / "pid", 30, lambda: runner.poll() is None)
        os.kill(runner.pid, signal.SIGKILL)
        runner.wait(10)
        assert wait_until(lambda: not live_processes_with(MARK, mark), 2)
    finally:
        kill_quietly(live_processes_with(MARK, mark))


def test_what_a_command_leaves_running_is_stopped_when_it_ends(tmp_path: Path) -> None:
    started = time.monotonic()
    result = SubprocessCommandRunner().run("nohup sleep 30 >/dev/null 2>&1 & echo $!", cwd=str(tmp_path))
    assert result.ok and time.monotonic() - started < 5
    child = int(result.stdout)
    assert wait_until(lambda: not alive(child), 2)


def test_a_timeout_kills_the_group_and_a_result_comes_back(tmp_path: Path) -> None:
    result = SubprocessCommandRunner().run("sleep 30 & echo $! > child; wait", cwd=str(tmp_path), timeout=0.3)
    assert result.timed_out and result.exit_code is None
    assert wait_until(lambda: not alive(int((tmp_path / "child").read_text())), 2)


def test_exit_codes_and_signals_of_the_shell_come_through(tmp_path: Path) -> None:
    runner = SubprocessCommandRunner()
    assert runner.run("exit 7", cwd=str(tmp_path)).exit_code == 7
    assert runner.run("kill -s KILL $$", cwd=str(tmp_path)).exit_code == -signal.SIGKILL


def test_a_command_that_cannot_start_leaves_no_descriptor_open(tmp_path: Path) -> None:
    before = sorted(os.listdir("/proc/self/fd"))
    with pytest.raises(OSError):
        SubprocessCommandRunner().run("true", cwd=str(tmp_path / "missing"))
    assert sorted(os.listdir("/proc/self/fd")) == before


def test_release_is_idempotent_and_ends_the_group(tmp_path: Path) -> None:
    supervised = spawn_supervised(["sleep", "30"], cwd=tmp_path)
    assert alive(supervised.pid)
    supervised.release()
    supervised.release()
    assert supervised.process.wait(5) == -signal.SIGKILL
