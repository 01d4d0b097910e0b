"""The durability contract (issue 16, docs/running.md): a runner killed with SIGKILL loses at most the node in
flight. `orchestra run` of three tool nodes, each waiting for its own gate file, is killed while each node runs;
every resume (by run directory or by session) continues from the last completed node, and no finished node runs
again: each command appends to `ran.log` when it starts and to `done.log` when its gate opened. `lagging`
puts back the first checkpoint.json before each resume, as if the background writer had written nothing
since: resume --logs-root then continues from the store's newer checkpoint of the same session."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from itertools import pairwise
from pathlib import Path

import pytest

from tests.support.orchestra_project import ORCHESTRA, write_files
from tests.support.processes import kill_quietly, live_processes_with, wait_until

pytestmark = pytest.mark.slow

NODES = ("a", "b", "c")


def pipeline(root: Path) -> str:
    def tool(node: str) -> str:
        command = (
            f"echo {node} >> {root}/ran.log; while [ ! -e {root}/go.{node} ]; do sleep 0.02; done; "
            f"echo {node} >> {root}/done.log"
        )
        return f'    {node} [shape=parallelogram, tool_command="{command}"]'

    nodes = "\n".join(tool(node) for node in NODES)
    return (
        f"digraph gated {{\n    start [shape=Mdiamond]; done [shape=Msquare]\n{nodes}\n"
        f"    start -> {' -> '.join(NODES)} -> done\n}}\n"
    )


def lines(path: Path) -> list[str]:
    return path.read_text().split() if path.exists() else []


def kill_when_started(runner: subprocess.Popen[bytes], root: Path, logs: Path, started: list[str]) -> None:
    """SIGKILL the runner once ran.log reads `started` (the last node is then waiting for its gate), and wait
    until no process of its node is left."""
    try:
        assert wait_until(lambda: lines(root / "ran.log") == started or runner.poll() is not None, 60)
        assert runner.poll() is None, f"the runner ended early: {runner.stderr.read().decode() if runner.stderr else ''}"
        os.kill(runner.pid, signal.SIGKILL)
        assert runner.wait(10) == -signal.SIGKILL
        assert wait_until(lambda: not live_processes_with("ORCHESTRA_LOGS_ROOT", str(logs)), 10)
    finally:
        kill_quietly(live_processes_with("ORCHESTRA_LOGS_ROOT", str(logs)))
        if runner.poll() is None:
            runner.kill()
            runner.wait(10)


def start(root: Path, *arguments: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [str(ORCHESTRA), *arguments, "--quiet"],
        cwd=root,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "NO_COLOR": "1"},
    )


@pytest.mark.parametrize("by", ["logs-root", "lagging", "session"])
def test_sigkill_during_each_node_loses_only_that_node(tmp_path: Path, by: str) -> None:
    root = tmp_path / "project"
    write_files(root, {"orchestra.yaml": "sandbox:\n  kind: none\n", "gated.dot": pipeline(root)})
    logs = tmp_path / "logs"
    kill_when_started(start(root, "run", "gated.dot", "--logs-root", str(logs)), root, logs, ["a"])
    session = json.loads((logs / "manifest.json").read_text())["session_id"]
    resume = ("resume", session) if by == "session" else ("resume", "--logs-root", str(logs))
    first_checkpoint = (logs / "checkpoint.json").read_bytes()

    started = ["a"]
    for finished, following in pairwise(NODES):
        (root / f"go.{finished}").touch()
        if by == "lagging":
            (logs / "checkpoint.json").write_bytes(first_checkpoint)
        started += [finished, following]  # the killed node again, then the next one
        kill_when_started(start(root, *resume), root, logs, started)
        assert lines(root / "done.log") == list(NODES[: NODES.index(finished) + 1])

    (root / f"go.{NODES[-1]}").touch()
    if by == "lagging":
        (logs / "checkpoint.json").write_bytes(first_checkpoint)
    last = start(root, *resume)
    _, stderr = last.communicate(timeout=120)
    assert last.returncode == 0, stderr.decode()
    assert lines(root / "ran.log") == ["a", "a", "b", "b", "c", "c"]
    assert lines(root / "done.log") == list(NODES)
    if by != "session":  # resume SESSION writes a run directory of its own
        final = json.loads((logs / "checkpoint.json").read_text())
        assert (final["status"], final["completed_nodes"]) == ("success", ["start", *NODES, "done"])
