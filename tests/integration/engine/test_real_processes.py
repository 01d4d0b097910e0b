"""The engine with the filesystem run directory and real shell commands."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from orchestra_adapters.filesystem.run_directory import FileRunDirectories
from orchestra_adapters.process.command_runner import SubprocessCommandRunner
from orchestra_core.engine.runner import PipelineEngine
from orchestra_core.graph import Graph, load_pipeline
from orchestra_core.handlers import build_registry
from orchestra_core.model.checkpoint import RunStatus
from orchestra_core.testing.clock import ManualClock
from tests.support.engine import graph


def engine(workdir: Path) -> PipelineEngine:
    registry = build_registry(command_runner=SubprocessCommandRunner(), workdir=str(workdir))
    return PipelineEngine(registry, run_directory=FileRunDirectories(), clock=ManualClock())


def tool_pipeline(command: str, extra: str = "") -> Graph:
    escaped = command.replace("\\", "\\\\").replace('"', '\\"')
    return graph(
        f"""
        digraph p {{
            graph [goal="verify"]
            start [shape=Mdiamond]; done [shape=Msquare]
            check [shape=parallelogram, tool_command="{escaped}", prompt="Check $goal" {extra}]
            start -> check -> done
        }}
        """
    )


def test_a_tool_runs_in_the_project_root_with_its_environment(tmp_path: Path) -> None:
    logs = tmp_path / "run"
    command = 'pwd; echo "$ORCHESTRA_NODE_ID $ATTRACTOR_NODE_ID $ORCHESTRA_SESSION_ID"; cat "$ORCHESTRA_PROMPT_FILE"; echo; ls "$ORCHESTRA_STAGE_DIR"'
    result = engine(tmp_path).run(tool_pipeline(command), session_id="s-42", logs_root=str(logs))
    assert result.status is RunStatus.SUCCESS, result.failure_reason
    lines = result.context["tool.output"].splitlines()
    assert lines[0] == str(tmp_path)
    assert lines[1] == "check check s-42"
    assert lines[2] == "Check verify"
    assert "prompt.txt" in lines[3:]
    output = (logs / "check" / "tool_output.txt").read_text(encoding="utf-8")
    assert output.startswith(f"$ {command}\n# exit code 0")
    assert json.loads((logs / "check" / "status.json").read_text(encoding="utf-8"))["outcome"] == "success"


def test_a_failing_command_reports_exit_code_and_stderr(tmp_path: Path) -> None:
    result = engine(tmp_path).run(tool_pipeline("echo oops >&2; exit 4"), session_id="s", logs_root=str(tmp_path / "r"))
    assert result.status is RunStatus.FAIL
    assert result.node_outcomes["check"].failure_reason == "exit code 4: oops"


def test_a_script_can_write_the_status_file(tmp_path: Path) -> None:
    command = 'echo \'{"outcome": "partial_success", "notes": "2 flaky tests"}\' > "$ORCHESTRA_STAGE_DIR/status.json"'
    result = engine(tmp_path).run(tool_pipeline(command), session_id="s", logs_root=str(tmp_path / "r"))
    assert result.node_outcomes["check"].status.value == "partial_success"
    assert result.node_outcomes["check"].notes == "2 flaky tests"


def test_a_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    command = f'sleep 30 & echo $! > "{pid_file}"; wait'
    started = time.monotonic()
    result = engine(tmp_path).run(tool_pipeline(command, ', timeout="300ms"'), session_id="s", logs_root=str(tmp_path / "r"))
    assert time.monotonic() - started < 10
    assert result.node_outcomes["check"].failure_reason.startswith("timed out after 300ms")
    child = int(pid_file.read_text(encoding="utf-8"))
    deadline = time.monotonic() + 5
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not _alive(child)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as stat:
            return stat.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def test_run_directory_layout_on_disk(tmp_path: Path) -> None:
    logs = tmp_path / "run"
    pipeline = graph(
        """
        digraph p {
            graph [goal="g"]
            start [shape=Mdiamond]; done [shape=Msquare]
            plan [prompt="Plan $goal"]
            start -> plan -> done
        }
        """
    )
    engine(tmp_path).run(pipeline, session_id="s-1", logs_root=str(logs), initial_context={"ticket": "T-1"})
    assert sorted(p.name for p in logs.iterdir()) == ["checkpoint.json", "done", "manifest.json", "plan", "start"]
    assert sorted(p.name for p in (logs / "plan").iterdir()) == ["context.json", "prompt.md", "response.md", "status.json"]
    checkpoint = json.loads((logs / "checkpoint.json").read_text(encoding="utf-8"))
    assert checkpoint["current_node"] == "done" and checkpoint["status"] == "success"
    assert checkpoint["completed_nodes"] == ["start", "plan", "done"]
    assert {node: outcome["status"] for node, outcome in checkpoint["node_outcomes"].items()} == {
        "start": "success", "plan": "success", "done": "success"
    }
    assert checkpoint["context"]["ticket"] == "T-1"
    manifest = json.loads((logs / "manifest.json").read_text(encoding="utf-8"))
    assert (manifest["session_id"], manifest["name"], manifest["initial_context"]) == ("s-1", "p", {"ticket": "T-1"})
    assert not list(logs.glob("*.tmp-*"))


def test_loop_restart_writes_the_new_round_under_restart_1(tmp_path: Path) -> None:
    logs = tmp_path / "run"
    counter = tmp_path / "count"
    command = f'n=$(cat "{counter}" 2>/dev/null || echo 0); n=$((n+1)); echo $n > "{counter}"; test $n -ge 2'
    escaped = command.replace('"', '\\"')
    pipeline = graph(
        f"""
        digraph p {{
            start [shape=Mdiamond]; done [shape=Msquare]
            check [shape=parallelogram, tool_command="{escaped}"]
            start -> check
            check -> done [condition="outcome=success"]
            check -> start [condition="outcome=fail", loop_restart=true]
        }}
        """
    )
    result = engine(tmp_path).run(pipeline, session_id="s", logs_root=str(logs))
    assert result.status is RunStatus.SUCCESS
    assert json.loads((logs / "check" / "status.json").read_text(encoding="utf-8"))["outcome"] == "fail"
    assert json.loads((logs / "restart-1" / "check" / "status.json").read_text(encoding="utf-8"))["outcome"] == "success"
    assert (logs / "restart-1" / "checkpoint.json").read_bytes() == (logs / "checkpoint.json").read_bytes()


def test_a_manager_supervises_a_child_pipeline_file(tmp_path: Path) -> None:
    (tmp_path / "child.dot").write_text(
        """digraph child {
            start [shape=Mdiamond]; done [shape=Msquare]
            work [shape=parallelogram, tool_command="echo child-work"]
            start -> work -> done
        }""",
        encoding="utf-8",
    )
    (tmp_path / "parent.dot").write_text(
        """digraph parent {
            graph [stack.child_dotfile="child.dot"]
            start [shape=Mdiamond]; done [shape=Msquare]
            boss [shape=house, manager.poll_interval="20ms"]
            start -> boss -> done
        }""",
        encoding="utf-8",
    )
    logs = tmp_path / "run"
    result = engine(tmp_path).run(load_pipeline(tmp_path / "parent.dot"), session_id="s", logs_root=str(logs))
    assert result.status is RunStatus.SUCCESS, result.failure_reason
    child_checkpoint = json.loads((logs / "boss" / "child" / "checkpoint.json").read_text(encoding="utf-8"))
    assert child_checkpoint["context"]["tool.output"] == "child-work"
    assert result.context["stack.child.completed_nodes"] == ["start", "work", "done"]
