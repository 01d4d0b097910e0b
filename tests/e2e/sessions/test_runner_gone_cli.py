"""No session stays `running` forever: once a killed runner's lock is free, `status` shows the session
`interrupted` (list, one session, branch sessions), `attach` prints what was recorded and returns with exit 1,
and `resume` continues it; a finished fan-out's branch sessions never show `running`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from tests.support.orchestra_project import ORCHESTRA, orchestra, run_json, write_files
from tests.support.processes import kill_quietly, live_processes_with, wait_for_file, wait_until

pytestmark = pytest.mark.slow

HOLD = """digraph hold {
    start [shape=Mdiamond]; done [shape=Msquare]
    first [shape=parallelogram, tool_command="echo first"]
    hold [shape=parallelogram, tool_command="if [ -f held ]; then echo resumed; else echo x > held; sleep 60; fi"]
    start -> first -> hold -> done
}
"""
FAN = """digraph fan {
    start [shape=Mdiamond]; done [shape=Msquare]
    fan [shape=component]
    a [shape=parallelogram, tool_command="echo a"]
    b [shape=parallelogram, tool_command="if [ -f held ]; then echo b; else echo x > held; sleep 60; fi"]
    merge [shape=tripleoctagon]
    start -> fan
    fan -> a -> merge
    fan -> b -> merge
    merge -> done
}
"""


def _kill_runner_at_hold(root: Path, pipeline: str, logs: Path) -> None:
    """Start `orchestra run`, wait until the node holds, SIGKILL the runner alone, wait for its node to go."""
    runner = subprocess.Popen(
        [str(ORCHESTRA), "run", pipeline, "--quiet", "--logs-root", str(logs)],
        cwd=root, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**os.environ, "NO_COLOR": "1"},
    )
    node = lambda: live_processes_with("ORCHESTRA_LOGS_ROOT", str(logs))  # noqa: E731
    try:
        wait_for_file(root / "held", 60, lambda: runner.poll() is None)
        os.kill(runner.pid, signal.SIGKILL)
        assert runner.wait(10) == -signal.SIGKILL
        assert wait_until(lambda: not node(), 5), node()
    finally:
        kill_quietly(node())
        if runner.poll() is None:
            runner.kill()
            runner.wait(10)


def _only_session(root: Path) -> str:
    sessions = run_json("status", cwd=root)["sessions"]
    assert len(sessions) == 1, sessions
    return str(sessions[0]["session_id"])


def test_a_killed_run_is_interrupted_attach_returns_and_resume_finishes(tmp_path: Path) -> None:
    root = tmp_path / "project"
    write_files(root, {"hold.dot": HOLD})
    _kill_runner_at_hold(root, "hold.dot", tmp_path / "logs")

    listed = run_json("status", cwd=root)["sessions"]
    assert [row["status"] for row in listed] == ["interrupted"], listed
    assert listed[0]["ended_at"] is not None
    session = str(listed[0]["session_id"])
    shown = run_json("status", session, cwd=root)
    assert shown["status"] == "interrupted"
    assert f"orchestra resume {session}" in shown["error"]
    assert "interrupted" in orchestra("status", cwd=root).stdout

    attached = orchestra("attach", session, cwd=root, timeout=30)
    assert attached.returncode == 1, attached.stderr
    assert "first" in attached.stdout and "hold" in attached.stdout  # what was recorded
    assert "interrupted" in attached.stderr and "following" not in attached.stderr
    as_json = orchestra("attach", session, "--json", cwd=root, timeout=30)
    assert as_json.returncode == 1
    assert json.loads(as_json.stdout.splitlines()[-1])["event"] == "interrupted"

    resumed = orchestra("resume", session, "--quiet", cwd=root)
    assert resumed.returncode == 0, resumed.stderr + resumed.stdout
    assert run_json("status", session, cwd=root)["status"] == "success"
    assert orchestra("attach", session, cwd=root, timeout=30).returncode == 0


def test_a_run_killed_in_its_fan_out_has_no_running_branch_and_a_finished_fan_out_none(tmp_path: Path) -> None:
    root = tmp_path / "project"
    write_files(root, {"fan.dot": FAN})
    _kill_runner_at_hold(root, "fan.dot", tmp_path / "logs")

    rows = run_json("status", "--all", cwd=root)["sessions"]
    assert len(rows) >= 3 and "running" not in {row["status"] for row in rows}, rows
    main = next(row for row in rows if row["branch"] is None)
    assert main["status"] == "interrupted"
    held = next(row for row in rows if row["branch"] and row["branch"].endswith("b"))
    assert held["status"] == "interrupted"
    assert run_json("status", held["session_id"], cwd=root)["status"] == "interrupted"
    branch_attach = orchestra("attach", held["session_id"], cwd=root, timeout=30)
    assert branch_attach.returncode == 1

    resumed = orchestra("resume", main["session_id"], "--quiet", cwd=root)
    assert resumed.returncode == 0, resumed.stderr + resumed.stdout
    rows = run_json("status", "--all", cwd=root)["sessions"]
    assert "running" not in {row["status"] for row in rows}, rows
    for row in rows:
        assert run_json("status", row["session_id"], cwd=root)["status"] != "running", row
