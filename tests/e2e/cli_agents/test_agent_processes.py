"""Process hygiene of CLI agents: the agent and everything it started (its MCP server included) run in their
own process group, which dies on the node timeout, on Ctrl-C and when the agent crashes; the node fails with
the agent's stderr. These faults need an agent that hangs or crashes on cue: a stand-in executable."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from tests.e2e.cli_agents.conftest import AgentProject
from tests.support.orchestra_project import ORCHESTRA
from tests.support.processes import alive, kill_quietly, wait_for_file, wait_until

# Prints Claude Code's init line, starts a child that would outlive it, notes both pids, then hangs.
HANGING_AGENT = """#!/bin/sh
echo '{"type":"system","subtype":"init","session_id":"s1","mcp_servers":[{"name":"orchestra","status":"connected"}]}'
sleep 300 &
echo "$$ $!" > "%(pids)s"
echo "the agent is thinking hard" >&2
wait
"""

CRASHING_AGENT = """#!/bin/sh
cat > /dev/null
echo '{"type":"system","subtype":"init","session_id":"s1","mcp_servers":[{"name":"orchestra","status":"connected"}]}'
echo "fatal: the agent fell over" >&2
exit 3
"""

FAILED_SERVER_AGENT = """#!/bin/sh
echo '{"type":"system","subtype":"init","session_id":"s1","mcp_servers":[{"name":"orchestra","status":"failed"}]}'
sleep 300
"""


def _stand_in(project: AgentProject, script: str) -> Path:
    path = project.root.parent / "stand-in-agent"
    path.write_text(script % {"pids": project.root.parent / "pids"}, encoding="utf-8")
    path.chmod(0o755)
    return path


def _env(project: AgentProject) -> dict[str, str]:
    return {**os.environ, "HOME": str(project.home), "NO_COLOR": "1"}


def _pids(project: AgentProject) -> list[int]:
    return [int(pid) for pid in wait_for_file(project.root.parent / "pids", 30).split()]


def test_the_node_timeout_kills_the_agent_and_its_children_and_fails_the_node(
    make_project: Callable[[str], AgentProject],
) -> None:
    project = make_project("claude-code")
    project.configure({"command": str(_stand_in(project, HANGING_AGENT))}, node_attrs=', timeout="2s"')
    started = time.monotonic()
    result = subprocess.run(
        [str(ORCHESTRA), "run", "pipeline.dot", "--json"],
        cwd=project.root,
        env=_env(project),
        capture_output=True,
        text=True,
        timeout=60,
    )
    pids = _pids(project)
    try:
        assert time.monotonic() - started < 30
        document = json.loads(result.stdout)
        assert document["status"] == "fail", document
        assert wait_until(lambda: not any(alive(pid) for pid in pids), 5), (
            "the agent's group outlived the node"
        )
    finally:
        kill_quietly(pids, within=project.root.parent)


def test_ctrl_c_stops_the_run_and_leaves_no_agent_process(
    make_project: Callable[[str], AgentProject],
) -> None:
    project = make_project("claude-code")
    project.configure({"command": str(_stand_in(project, HANGING_AGENT))})
    process = subprocess.Popen(
        [str(ORCHESTRA), "run", "pipeline.dot"],
        cwd=project.root,
        env=_env(project),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    pids = _pids(project)
    try:
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=30)
        assert process.returncode != 0
        assert "Traceback" not in stderr
        assert wait_until(lambda: not any(alive(pid) for pid in pids), 5), "an agent process survived Ctrl-C"
    finally:
        process.kill()
        kill_quietly(pids, within=project.root.parent)


def test_a_crashed_agent_fails_the_node_with_its_stderr(make_project: Callable[[str], AgentProject]) -> None:
    project = make_project("claude-code")
    project.configure({"command": str(_stand_in(project, CRASHING_AGENT))})
    result = subprocess.run(
        [str(ORCHESTRA), "run", "pipeline.dot", "--json"],
        cwd=project.root,
        env=_env(project),
        capture_output=True,
        text=True,
        timeout=60,
    )
    document = json.loads(result.stdout)
    assert document["status"] == "fail"
    assert "status 3" in document["failure_reason"] and "the agent fell over" in document["failure_reason"]


def test_an_agent_that_cannot_reach_the_tool_server_is_stopped_at_once(
    make_project: Callable[[str], AgentProject],
) -> None:
    project = make_project("claude-code")
    project.configure({"command": str(_stand_in(project, FAILED_SERVER_AGENT))})
    started = time.monotonic()
    result = subprocess.run(
        [str(ORCHESTRA), "run", "pipeline.dot", "--json"],
        cwd=project.root,
        env=_env(project),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert time.monotonic() - started < 30
    document = json.loads(result.stdout)
    assert document["status"] == "fail"
    assert "tool server" in document["failure_reason"]


def test_a_missing_executable_fails_cleanly(make_project: Callable[[str], AgentProject]) -> None:
    project = make_project("claude-code")
    project.configure({"command": str(project.root / "no-such-claude")})
    result = subprocess.run(
        [str(ORCHESTRA), "run", "pipeline.dot"],
        cwd=project.root,
        env=_env(project),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert "no-such-claude" in result.stderr + result.stdout
    assert "Traceback" not in result.stderr
