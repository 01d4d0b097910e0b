"""One writer per checkout: while a run works in place in a checkout, a second in-place run there is refused
(exit 2, naming the running session); the lock dies with its runner; worktree runs share a repository freely."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.support.git_repos import GitRepo, make_repo
from tests.support.orchestra_project import ORCHESTRA, orchestra

pytestmark = pytest.mark.slow

# `wait` signals readiness with `<signals>/ready-<n>` and sleeps while `<signals>/hold` exists; the signal files
# live outside the repository, so the checkout stays clean while it waits.
PIPELINE = """digraph hold {{
    start [shape=Mdiamond]; done [shape=Msquare]
    wait [shape=parallelogram,
          tool_command="n=$(ls {signals} | grep -c ready); touch {signals}/ready-$n; while [ -e {signals}/hold ]; do sleep 0.05; done"]
    start -> wait -> done
}}
"""


def _project(tmp_path: Path, isolation: str) -> tuple[GitRepo, Path]:
    signals = tmp_path / "signals"
    signals.mkdir()
    config = f"workspace:\n  repos:\n    project: {{path: ., isolation: {isolation}}}\n"
    repo = make_repo(tmp_path / "project", {"orchestra.yaml": config, "hold.dot": PIPELINE.format(signals=signals)})
    return repo, signals


def _spawn(repo: GitRepo) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(ORCHESTRA), "run", "hold.dot", "--quiet"],
        cwd=repo.path,
        text=True,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "NO_COLOR": "1"},
    )


def _wait_ready(signals: Path, count: int, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while len(list(signals.glob("ready-*"))) < count:
        assert process.poll() is None, process.stderr.read() if process.stderr else ""
        assert time.monotonic() < deadline, "the run never reached its tool node"
        time.sleep(0.02)


def _kill(process: subprocess.Popen[str]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(30)


def test_a_second_in_place_run_on_a_busy_checkout_is_refused_naming_the_running_session(tmp_path: Path) -> None:
    repo, signals = _project(tmp_path, "in_place")
    (signals / "hold").touch()
    first = _spawn(repo)
    try:
        _wait_ready(signals, 1, first)
        second = orchestra("run", "hold.dot", cwd=repo.path)
        assert second.returncode == 2, second.stderr + second.stdout
        message = second.stderr.strip().splitlines()[-1]
        assert f"{repo.path.resolve()} is in use: session 1 (pid {first.pid}) works in place there" in message
        assert repo.git("symbolic-ref", "--short", "HEAD").strip() == "orchestra/hold/1"
        assert "orchestra/hold/2" not in repo.branches()
    finally:
        _kill(first)

    # The runner died (SIGKILL): its lock went with it, and the next run may work in place.
    (signals / "hold").unlink()
    repo.git("checkout", "-q", "main")
    third = orchestra("run", "hold.dot", "--quiet", cwd=repo.path)
    assert third.returncode == 0, third.stderr + third.stdout


def test_two_worktree_runs_on_one_repository_both_run(tmp_path: Path) -> None:
    repo, signals = _project(tmp_path, "worktree")
    (signals / "hold").touch()
    first, second = _spawn(repo), None
    try:
        _wait_ready(signals, 1, first)
        second = _spawn(repo)
        _wait_ready(signals, 2, second)
        (signals / "hold").unlink()
        assert first.wait(60) == 0 and second.wait(60) == 0
    finally:
        for process in (first, second):
            if process is not None and process.poll() is None:
                _kill(process)
    assert {"orchestra/hold/1", "orchestra/hold/2"} <= set(repo.branches())
