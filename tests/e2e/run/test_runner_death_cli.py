"""A dying runner leaves nothing behind: SIGKILL `orchestra run` while a tool node runs a shell with a
background child, and within two seconds no process of that node is alive (without and inside the sandbox)."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

from tests.support.orchestra_project import ORCHESTRA, write_files
from tests.support.processes import (
    group_of,
    kill_quietly,
    live_group_members,
    live_processes_with,
    wait_for_file,
    wait_until,
)
from tests.support.sandbox import needs_bwrap

pytestmark = pytest.mark.slow

PIPELINE = """digraph dies {
    start [shape=Mdiamond]; done [shape=Msquare]
    hold [shape=parallelogram, tool_command="sh -c 'echo $$ > pid; sleep 30 & wait'; touch finished"]
    start -> hold -> done
}
"""


@pytest.mark.parametrize("kind", ["none", pytest.param("bubblewrap", marks=needs_bwrap())])
def test_sigkill_of_the_runner_ends_every_process_of_the_node(tmp_path: Path, kind: str) -> None:
    root = tmp_path / "project"
    write_files(root, {"orchestra.yaml": f"sandbox:\n  kind: {kind}\n", "dies.dot": PIPELINE})
    logs = tmp_path / "logs"
    runner = subprocess.Popen(
        [str(ORCHESTRA), "run", "dies.dot", "--quiet", "--logs-root", str(logs)],
        cwd=root,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "NO_COLOR": "1"},
    )
    node = lambda: live_processes_with("ORCHESTRA_LOGS_ROOT", str(logs))  # noqa: E731
    try:
        wait_for_file(root / "pid", 60, lambda: runner.poll() is None)
        assert wait_until(lambda: len(node()) >= 3, 5), node()  # the shells and the sleep
        group = group_of(int((root / "pid").read_text())) if kind == "none" else None
        os.kill(runner.pid, signal.SIGKILL)  # the runner alone, not its process group
        assert runner.wait(10) == -signal.SIGKILL
        assert wait_until(lambda: not node(), 2), f"still alive 2 s after the runner died: {node()}"
        if group is not None:
            assert group != runner.pid and live_group_members(group) == []
        assert not (root / "finished").exists()
    finally:
        kill_quietly(node())
        if runner.poll() is None:
            runner.kill()
            runner.wait(10)
