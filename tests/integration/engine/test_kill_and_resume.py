"""SIGKILL `orchestra run` in the middle of a node, resume it: finished nodes do not run again and the final
checkpoint equals an uninterrupted run's (timestamps, session ids and paths aside)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.processes import kill_group_quietly

ORCHESTRA = Path(sys.executable).with_name("orchestra")
PIPELINE = r"""digraph killme {
    graph [goal="survive a crash"]
    start [shape=Mdiamond]
    done [shape=Msquare]
    one [shape=parallelogram, tool_command="echo one >> \"$RAN\""]
    two [prompt="Plan how to $goal"]
    slow [shape=parallelogram, tool_command="echo slow >> \"$RAN\"; if [ ! -e \"$MARK\" ]; then echo $$ > \"$MARK.pid\"; touch \"$MARK\"; sleep 60; fi"]
    three [shape=parallelogram, tool_command="echo three >> \"$RAN\""]
    start -> one -> two -> slow -> three -> done
}
"""


def orchestra(*args: str | Path, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [str(ORCHESTRA), *map(str, args)], capture_output=True, text=True, env={**os.environ, **env}, cwd=cwd, timeout=120
    )
    assert "Traceback" not in result.stderr, result.stderr
    return result


def normalized(logs: Path) -> dict[str, Any]:
    """The final checkpoint with the run's own paths and session id (a short store counter) masked."""
    manifest = json.loads((logs / "manifest.json").read_text(encoding="utf-8"))
    session = manifest["session_id"]

    def mask(value: Any) -> Any:
        if isinstance(value, dict):
            return {key: mask(item) for key, item in value.items()}
        if isinstance(value, list):
            return [mask(item) for item in value]
        if isinstance(value, str):
            return "<session>" if value == session else value.replace(str(logs), "<logs>")
        return value

    document = mask(json.loads((logs / "checkpoint.json").read_text(encoding="utf-8")))
    document.pop("timestamp")
    return document


def wait_for(path: Path, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        if time.monotonic() > deadline:
            raise AssertionError(f"{path} never appeared")
        time.sleep(0.02)


@pytest.mark.slow
def test_sigkill_then_resume_ends_like_an_uninterrupted_run(tmp_path: Path) -> None:
    pipeline = tmp_path / "killme.dot"
    pipeline.write_text(PIPELINE, encoding="utf-8")
    killed_logs, ran, mark = tmp_path / "killed", tmp_path / "ran.txt", tmp_path / "mark"
    env = {"RAN": str(ran), "MARK": str(mark)}
    process = subprocess.Popen(
        [str(ORCHESTRA), "run", str(pipeline), "--logs-root", str(killed_logs), "--quiet"],
        env={**os.environ, **env},
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        wait_for(Path(f"{mark}.pid"), 60)
        wait_for(mark, 5)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(30)
        if Path(f"{mark}.pid").exists():  # the sleeping tool runs in its own process group
            kill_group_quietly(int(Path(f"{mark}.pid").read_text(encoding="utf-8")), tmp_path)
    interrupted = json.loads((killed_logs / "checkpoint.json").read_text(encoding="utf-8"))
    # checkpoint.json may lag the store by the background writer (docs/running.md, Durability): the checkpoint
    # after `two` or an earlier one; resume continues from the store's, which has `two` done.
    assert interrupted["status"] == "running" and interrupted["current_node"] in ("", "start", "one", "two")

    resumed = orchestra("resume", "--logs-root", killed_logs, "--quiet", env=env, cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert ran.read_text(encoding="utf-8").split() == ["one", "slow", "slow", "three"]

    clean_logs, clean_ran = tmp_path / "clean", tmp_path / "clean_ran.txt"
    clean = orchestra("run", pipeline, "--logs-root", clean_logs, "--quiet", env={**env, "RAN": str(clean_ran)}, cwd=tmp_path)
    assert clean.returncode == 0, clean.stderr
    assert clean_ran.read_text(encoding="utf-8").split() == ["one", "slow", "three"]
    assert normalized(killed_logs) == normalized(clean_logs)
    manifest = json.loads((killed_logs / "manifest.json").read_text(encoding="utf-8"))
    assert len(manifest["resumed_at"]) == 1
