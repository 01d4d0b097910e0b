"""`orchestra attach` against real runs: a finished session's history, a running one followed live (parallel
branches forked while attached included), Ctrl-C, failed and unknown sessions."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from orchestra_adapters.storage.sqlite_store import SqliteSessionStore
from orchestra_core.model.store_errors import SessionNotFoundError, StoreError
from tests.support.orchestra_project import ORCHESTRA, orchestra, run_json, write_files

SLOW_FAN = """digraph slow_fan {
    start [shape=Mdiamond]; done [shape=Msquare]
    warm [shape=parallelogram, tool_command="sleep 1.5"]
    fan [shape=component]
    a [shape=parallelogram, tool_command="sleep 0.5; echo a"]
    b [shape=parallelogram, tool_command="sleep 0.5; echo b"]
    merge [shape=tripleoctagon]
    start -> warm -> fan
    fan -> a -> merge
    fan -> b -> merge
    merge -> done
}
"""
STUCK = """digraph stuck {
    start [shape=Mdiamond]; done [shape=Msquare]
    wait [shape=parallelogram, tool_command="sleep 30"]
    start -> wait -> done
}
"""
FAILING = """digraph failing {
    start [shape=Mdiamond]; done [shape=Msquare]
    check [shape=parallelogram, tool_command="echo broken >&2; exit 3"]
    start -> check -> done
}
"""
QUICK = """digraph quick {
    start [shape=Mdiamond]; done [shape=Msquare]
    plan [prompt=p]
    start -> plan -> done
}
"""


def _start(args: list[str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(ORCHESTRA), *args], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "NO_COLOR": "1"}, start_new_session=True,
    )


def _wait_for_session(project: Path, session: str, *, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (project / ".orchestra" / "orchestra.db").exists():
            try:
                with SqliteSessionStore(project / ".orchestra" / "orchestra.db") as store:
                    if store.head(session).turn_id is not None:
                        return
            except (SessionNotFoundError, StoreError):
                pass
        time.sleep(0.05)
    raise AssertionError(f"session {session} did not start")


def _stop(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
    process.communicate(timeout=30)


def test_a_finished_session_prints_its_history_and_exits(tmp_path: Path) -> None:
    write_files(tmp_path, {"quick.dot": QUICK})
    assert orchestra("run", "quick.dot", "--quiet", cwd=tmp_path).returncode == 0
    text = orchestra("attach", "1", cwd=tmp_path)
    assert text.returncode == 0 and text.stderr == ""
    lines = [line.split("  ", 1)[1] for line in text.stdout.splitlines()]
    assert lines[0] == "pipeline quick started" and lines[-1].startswith("pipeline succeeded after ")
    assert "> plan (codergen)" in lines and any(line.startswith("ok plan success in ") for line in lines)
    assert "checkpoint 2 before start" in lines
    as_json = orchestra("attach", "1", "--json", cwd=tmp_path)
    entries = [json.loads(line) for line in as_json.stdout.splitlines()]
    assert [e["turn_id"] for e in entries] == [t["turn_id"] for t in run_json("status", "1", cwd=tmp_path)["turns"]]
    assert entries[-1]["type"] == "dev.orchestra.PipelineLifecycle" and entries[-1]["event"] == "completed"


@pytest.mark.slow
def test_a_running_session_is_followed_live_with_its_branches(tmp_path: Path) -> None:
    write_files(tmp_path, {"slow_fan.dot": SLOW_FAN})
    run = _start(["run", "slow_fan.dot", "--quiet"], tmp_path)
    try:
        _wait_for_session(tmp_path, "1")
        attach = _start(["attach", "1", "--json", "--interval", "0.05"], tmp_path)
        assert attach.stdout is not None
        received: list[tuple[dict[str, Any], bool]] = []  # (turn, whether the run was still going)
        for line in attach.stdout:
            received.append((json.loads(line), run.poll() is None))
        assert attach.wait(timeout=30) == 0, attach.stderr.read() if attach.stderr else ""
        assert run.wait(timeout=30) == 0
    finally:
        _stop(run)
    turns = [turn for turn, _ in received]
    assert turns[-1]["event"] == "completed" and turns[-1]["session_id"] == "1"
    live = [turn for turn, running in received if running]
    assert any(t["type"] == "dev.orchestra.ParallelExecution" and t["event"] == "fan_out" for t in live)
    branch_turns = [t for t in turns if t["branch"] is not None]
    assert {t["branch"] for t in branch_turns} == {"fan:a", "fan:b"}
    assert {t["node_id"] for t in branch_turns if t["type"] == "dev.orchestra.NodeExecution"} == {"a", "b"}
    assert all(t["session_id"] != "1" for t in branch_turns)
    assert any(t in live for t in branch_turns)  # branch turns arrived while the branches ran
    assert len({t["turn_id"] for t in turns}) == len(turns)
    expected = run_json("status", "1", cwd=tmp_path)["turns"]
    assert [t["turn_id"] for t in turns] == [t["turn_id"] for t in expected]


@pytest.mark.slow
def test_ctrl_c_stops_following_without_a_traceback(tmp_path: Path) -> None:
    write_files(tmp_path, {"stuck.dot": STUCK})
    run = _start(["run", "stuck.dot", "--quiet"], tmp_path)
    try:
        _wait_for_session(tmp_path, "1")
        attach = _start(["attach", "1"], tmp_path)
        assert attach.stdout is not None
        seen = []
        for line in attach.stdout:  # the run sleeps 30 s in `wait`: attach is following, not finishing
            seen.append(line.split("  ", 1)[1].strip())
            if seen[-1] == "> wait (tool)":
                break
        assert seen[0] == "pipeline stuck started"
        attach.send_signal(signal.SIGINT)
        out, err = attach.communicate(timeout=30)
        assert attach.returncode == 0 and "Traceback" not in err and out == ""
        assert err.startswith("following session 1 (stuck); Ctrl-C to stop")
    finally:
        _stop(run)


def test_failed_and_unknown_sessions(tmp_path: Path) -> None:
    missing = orchestra("attach", "1", cwd=tmp_path)
    assert missing.returncode == 2 and missing.stderr.startswith("orchestra: error: no session '1'")
    write_files(tmp_path, {"failing.dot": FAILING})
    assert orchestra("run", "failing.dot", "--quiet", cwd=tmp_path).returncode == 1
    failed = orchestra("attach", "1", cwd=tmp_path)
    assert failed.returncode == 1
    last = failed.stdout.splitlines()[-1].split("  ", 1)[1]
    assert last.startswith("pipeline FAILED after ") and last.endswith(": stage check failed: exit code 3: broken")
    assert "x check failed (attempt 1) in " in failed.stdout and "exit code 3: broken" in failed.stdout
    unknown = orchestra("attach", "7", "--json", cwd=tmp_path)
    assert unknown.returncode == 2 and len(unknown.stderr.splitlines()) == 1
    assert json.loads(unknown.stdout)["error"]["exit_code"] == 2  # --json: the error as a document
    assert orchestra("attach", "1", "--interval", "0", cwd=tmp_path).returncode == 2
