"""A runner killed with SIGKILL while an agent works: during a CLI agent's node and during a project tool an
agent called, no process of the node is alive two seconds later, `orchestra status` says the node was
interrupted, and `orchestra resume` runs that node once more and nothing before it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from tests.support.git_repos import make_repo
from tests.support.orchestra_project import ORCHESTRA, orchestra
from tests.support.processes import (
    alive,
    described,
    kill_quietly,
    live_processes_with,
    wait_for_file,
    wait_until,
)
from tests.support.sandbox import needs_bwrap

pytestmark = pytest.mark.slow

# Notes each start in `runs`; with `release` present it finishes, else it starts a child and both wait.
HOLD = (
    'echo run >> {signals}/runs; if [ -e {signals}/release ]; then {finish}; exit 0; fi; '
    'sleep 300 & echo "$$ $!" > {signals}/pids; wait'
)
STAND_IN_AGENT = """#!/bin/sh
cat > /dev/null
echo '{{"type":"system","subtype":"init","session_id":"s1","mcp_servers":[{{"name":"orchestra","status":"connected"}}]}}'
%s
"""
PIPELINE = """digraph dies {
    start [shape=Mdiamond]; exit [shape=Msquare]
    before [shape=parallelogram, tool_command="echo before >> %(signals)s/before"]
    work [prompt="Work"%(attrs)s]
    start -> before -> work -> exit
}
"""


def _project(tmp_path: Path, config: dict[str, object], attrs: str, extra: dict[str, str]) -> tuple[Path, Path]:
    signals = tmp_path / "signals"
    signals.mkdir()
    files = {
        "orchestra.yaml": json.dumps(config), "dies.dot": PIPELINE % {"signals": signals, "attrs": attrs},
        ".gitignore": ".orchestra/\n", **extra,
    }  # fmt: skip
    return make_repo(tmp_path / "project", files).path, signals


def _kill_during_the_node_then_resume(root: Path, signals: Path, env: dict[str, str]) -> None:
    runner = subprocess.Popen(
        [str(ORCHESTRA), "run", "dies.dot", "--quiet"], cwd=root, env={**env, "NO_COLOR": "1"},
        start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    pids: list[int] = []
    try:
        pids = [int(pid) for pid in wait_for_file(signals / "pids", 60, lambda: runner.poll() is None).split()]
        assert all(alive(pid) for pid in pids)
        # a node's start is written within 50 ms (the recorder's flusher): the contract covers a node past that
        assert wait_until(lambda: _node_seen(root, env, "work"), 30), "the node's start was never recorded"
        os.kill(runner.pid, signal.SIGKILL)  # the runner alone, not its process group
        assert runner.wait(10) == -signal.SIGKILL
        assert wait_until(lambda: not any(alive(pid) for pid in pids), 5), "a process of the node outlived the runner"
    finally:
        kill_quietly(pids, within=root)
        if runner.poll() is None:
            runner.kill()
            runner.wait(10)

    status = json.loads(orchestra("status", "1", "--json", cwd=root, env=env).stdout)
    assert status["status"] == "interrupted"
    assert [(node["id"], node["status"]) for node in status["nodes"]][-1] == ("work", "interrupted")

    (signals / "release").touch()
    resumed = orchestra("resume", "1", "--json", cwd=root, env=env)
    assert resumed.returncode == 0, resumed.stderr + resumed.stdout
    assert json.loads(resumed.stdout)["status"] == "success"
    assert (signals / "runs").read_text().split() == ["run", "run"]  # the node once more
    assert (signals / "before").read_text().split() == ["before"]  # the node before it not again


def _node_seen(root: Path, env: dict[str, str], node: str) -> bool:
    status = orchestra("status", "1", "--json", cwd=root, env=env)
    return status.returncode == 0 and node in [item["id"] for item in json.loads(status.stdout).get("nodes", [])]


def test_sigkill_during_a_cli_agent_node_leaves_no_agent_and_resume_reruns_the_node(tmp_path: Path) -> None:
    signals = tmp_path / "signals"
    finish = "echo '{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"done\"}'"
    agent = tmp_path / "stand-in-agent"
    agent.write_text(STAND_IN_AGENT % HOLD.format(signals=signals, finish=finish), encoding="utf-8")
    agent.chmod(0o755)
    config = {"workspace": {"repos": {"project": {"path": "."}}}, "backend": "claude-code",
              "claude_code": {"command": str(agent)}}  # fmt: skip
    root, signals = _project(tmp_path, config, "", {})
    env = {**os.environ, "HOME": str(tmp_path / "home")}
    _kill_during_the_node_then_resume(root, signals, env)


def test_sigkill_during_a_project_tool_call_leaves_no_process_and_resume_reruns_the_node(tmp_path: Path) -> None:
    signals = tmp_path / "signals"
    cassette = {"nodes": {"work": [{"content": "Hold on", "tool_calls": [{"name": "project:hold", "args": {}}]},
                                   {"content": "done"}]}}  # fmt: skip
    config = {
        "providers": {"default": "scripted", "scripted": {"cassette": "cassette.yaml"}}, "backend": "langgraph",
        "workspace": {"repos": {"project": {"path": "."}},
                      "tools": {"project": {"hold": {"command": HOLD.format(signals=signals, finish="true")}}}},
    }  # fmt: skip
    root, signals = _project(tmp_path, config, ', agent.tools="project:hold"', {"cassette.yaml": json.dumps(cassette)})
    _kill_during_the_node_then_resume(root, signals, dict(os.environ))


@needs_bwrap()
def test_sigkill_during_a_sandboxed_cli_agent_leaves_no_process_of_it(tmp_path: Path) -> None:
    # inside the sandbox's pid namespace `$$` means nothing to the host: its processes are found by a variable
    marker = f"orchestra-test-{tmp_path.name}"
    agent = tmp_path / "stand-in-agent"
    agent.write_text(STAND_IN_AGENT % "sleep 300 & sleep 300", encoding="utf-8")
    agent.chmod(0o755)
    config = {"workspace": {"repos": {"project": {"path": "."}}}, "backend": "claude-code",
              "claude_code": {"command": str(agent), "env": {"ORCHESTRA_TEST_AGENT": marker}},
              "sandbox": {"kind": "bubblewrap", "writable": [str(tmp_path / "signals")]}}  # fmt: skip
    root, _signals = _project(tmp_path, config, "", {})
    runner = subprocess.Popen(
        [str(ORCHESTRA), "run", "dies.dot", "--quiet"], cwd=root, env={**os.environ, "HOME": str(tmp_path / "home")},
        start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    agent_processes = lambda: live_processes_with("ORCHESTRA_TEST_AGENT", marker)  # noqa: E731
    try:
        assert wait_until(lambda: len(agent_processes()) >= 3, 60), "the agent never started"  # sh and two sleeps
        os.kill(runner.pid, signal.SIGKILL)
        assert runner.wait(10) == -signal.SIGKILL
        assert wait_until(lambda: not agent_processes(), 5), f"alive 5 s after the runner died: {described(agent_processes())}"
    finally:
        kill_quietly(agent_processes())
        if runner.poll() is None:
            runner.kill()
            runner.wait(10)
