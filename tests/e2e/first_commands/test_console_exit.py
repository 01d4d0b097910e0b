"""The `orchestra` console entry ends the process without tearing the interpreter down (issue 16), and loses
nothing by it: exit handlers run, stdout and stderr are flushed, the exit code is kept, and a thread that is
not a daemon is still waited for."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PROBE = """
import atexit, sys, threading, time
sys.argv = ["orchestra", *sys.argv[1:]]
atexit.register(lambda: print("exit handler ran", end=""))  # no newline: sits in stdout's buffer
class TornDown:
    def __del__(self):
        print("interpreter torn down", file=sys.stderr)
kept = TornDown()  # a module global: released when the interpreter tears its modules down
import orchestra_cli.main as cli
if "--thread" in sys.argv:
    sys.argv.remove("--thread")
    # The thread outlives the command: it waits for main() to end, not for a time since the start.
    command, ended = cli.main, threading.Event()
    def main():
        try:
            command()
        finally:
            ended.set()
    cli.main = main
    threading.Thread(target=lambda: (ended.wait(), time.sleep(0.3), print(" and the thread's line", end=""))).start()
cli.console()
print("never printed")
"""


def console(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    buffered = {key: value for key, value in os.environ.items() if key != "PYTHONUNBUFFERED"}
    return subprocess.run(
        [sys.executable, "-c", PROBE, *args], capture_output=True, text=True, cwd=cwd, timeout=60, env=buffered
    )


def test_a_command_exits_with_its_code_after_the_exit_handlers_and_a_flush(tmp_path: Path) -> None:
    done = console("--version", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("orchestra") and done.stdout.endswith("exit handler ran")
    assert "never printed" not in done.stdout
    assert "interpreter torn down" not in done.stderr


def test_a_failing_command_keeps_its_exit_code(tmp_path: Path) -> None:
    done = console("compile", str(tmp_path / "missing.dot"), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "missing.dot" in done.stderr and done.stdout.endswith("exit handler ran")


def test_a_thread_still_running_is_waited_for(tmp_path: Path) -> None:
    done = console("--version", "--thread", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert " and the thread's line" in done.stdout
    assert "interpreter torn down" in done.stderr  # the ordinary exit
