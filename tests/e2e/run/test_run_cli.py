"""`orchestra run` and `orchestra resume` through real processes: output, JSON, exit codes, no tracebacks."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

ORCHESTRA = Path(sys.executable).with_name("orchestra")
SMOKE = """digraph test_pipeline {
    graph [goal="Create a hello world Python script"]
    start       [shape=Mdiamond]
    plan        [shape=box, prompt="Plan how to create a hello world script for: $goal"]
    implement   [shape=box, prompt="Write the code based on the plan", goal_gate=true, retry_target="plan", max_visits=3]
    review      [shape=box, prompt="Review the code for correctness"]
    done        [shape=Msquare]
    start -> plan
    plan -> implement
    implement -> review [condition="outcome=success"]
    implement -> plan   [condition="outcome=fail", label="Retry"]
    review -> done      [condition="outcome=success"]
    review -> implement [condition="outcome=fail", label="Fix"]
}
"""
GATE = """digraph gate {
    start [shape=Mdiamond]; done [shape=Msquare]
    review [shape=hexagon, label="Ship it?"]
    ship [prompt="ship"]; fix [prompt="fix"]
    start -> review
    review -> ship [label="[A] Approve"]
    review -> fix [label="[R] Revise"]
    ship -> done
    fix -> done
}
"""
FAILING = """digraph failing {
    start [shape=Mdiamond]; done [shape=Msquare]
    check [shape=parallelogram, tool_command="echo broken >&2; exit 3"]
    start -> check -> done
}
"""


def orchestra(*args: str | Path, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [str(ORCHESTRA), *map(str, args)], capture_output=True, text=True, cwd=cwd, input=stdin, timeout=60,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert "Traceback" not in result.stderr, result.stderr
    return result


def write(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return path


def test_run_prints_the_session_first_and_progress_and_succeeds(tmp_path: Path) -> None:
    pipeline = write(tmp_path, "smoke.dot", SMOKE)
    result = orchestra("run", pipeline, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("session ")
    session = lines[0].split()[1]
    logs = tmp_path / ".orchestra" / "runs" / session
    assert lines[1] == f"logs    {logs}"
    assert "> plan (codergen)" in lines and any(line.startswith("ok review success in") for line in lines)
    assert lines[-1].startswith("pipeline succeeded in")
    for node in ("plan", "implement", "review"):
        assert {p.name for p in (logs / node).iterdir()} == {"prompt.md", "response.md", "status.json", "context.json"}
    assert json.loads((logs / "checkpoint.json").read_text(encoding="utf-8"))["current_node"] == "done"


def test_json_output_is_exactly_the_design_document(tmp_path: Path) -> None:
    pipeline = write(tmp_path, "smoke.dot", SMOKE)
    result = orchestra("run", pipeline, "--json", "--set", "ticket=T-9", "--set", "note=a=b", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert set(document) == {
        "session_id", "status", "completed_nodes", "node_outcomes", "context", "logs_root", "repos", "failure_reason"
    }
    assert document["status"] == "success" and document["failure_reason"] is None
    assert document["completed_nodes"] == ["start", "plan", "implement", "review", "done"]
    assert document["node_outcomes"]["implement"] == "success"
    assert document["context"]["ticket"] == "T-9" and document["context"]["note"] == "a=b"
    assert document["context"]["graph.goal"] == "Create a hello world Python script"
    assert document["repos"] == {}
    assert Path(document["logs_root"]).name == document["session_id"]
    assert "> plan (codergen)" in result.stderr  # progress goes to stderr with --json


def test_quiet_json_prints_nothing_else(tmp_path: Path) -> None:
    pipeline = write(tmp_path, "smoke.dot", SMOKE)
    result = orchestra("run", pipeline, "--json", "--quiet", "--logs-root", tmp_path / "here", cwd=tmp_path)
    assert result.returncode == 0 and result.stderr == ""
    assert json.loads(result.stdout)["logs_root"] == str(tmp_path / "here")


def test_a_failed_pipeline_exits_1(tmp_path: Path) -> None:
    pipeline = write(tmp_path, "failing.dot", FAILING)
    result = orchestra("run", pipeline, "--json", cwd=tmp_path)
    assert result.returncode == 1
    document = json.loads(result.stdout)
    assert document["status"] == "fail" and document["node_outcomes"]["check"] == "fail"
    assert "exit code 3" in document["failure_reason"] and "\n" not in document["failure_reason"]
    assert "x check FAILED" in result.stderr and "exit code 3: broken" in result.stderr


def test_validation_errors_exit_1_and_are_listed(tmp_path: Path) -> None:
    pipeline = write(tmp_path, "bad.dot", "digraph bad { a [prompt=x]; b [prompt=y]; a -> b }")
    result = orchestra("run", pipeline, cwd=tmp_path)
    assert result.returncode == 1
    assert "bad.dot: error [start_node]" in result.stderr
    assert result.stdout == "" and not (tmp_path / ".orchestra").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("run", "missing.dot"), "missing.dot: file not found"),
        (("run", "broken.dot"), "broken.dot:1:"),
        (("run", "smoke.dot", "--backend", "gpt-9"), "unknown backend 'gpt-9'; available: simulate"),
        (("run", "smoke.dot", "--set", "novalue"), "--set expects KEY=VALUE, got 'novalue'"),
        (("run", "smoke.dot", "--answers", "nope.yaml"), "nope.yaml: answers file not found"),
        (("run", "smoke.dot", "--config", "nope.yaml"), "nope.yaml: config file not found"),
        (("resume", "smoke.dot"), "--logs-root"),
        (("resume", "--logs-root", "empty"), "no checkpoint to resume from"),
    ],
)
def test_bad_input_exits_2_with_one_line(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    write(tmp_path, "smoke.dot", SMOKE)
    write(tmp_path, "broken.dot", "digraph { a -> }")
    (tmp_path / "empty").mkdir()
    result = orchestra(*args, cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.startswith("orchestra: error: ") and message in result.stderr
    assert result.stderr.count("\n") == 1


def test_answers_file_routes_human_gates(tmp_path: Path) -> None:
    pipeline = write(tmp_path, "gate.dot", GATE)
    answers = write(tmp_path, "answers.yaml", "review: Revise\n")
    result = orchestra("run", pipeline, "--answers", answers, "--json", "--quiet", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "fix" in json.loads(result.stdout)["completed_nodes"]
    wrong = write(tmp_path, "wrong.yaml", "review: Maybe\n")
    failed = orchestra("run", pipeline, "--answers", wrong, "--json", "--quiet", cwd=tmp_path)
    assert failed.returncode == 1
    assert json.loads(failed.stdout)["node_outcomes"]["review"] == "fail"


def test_auto_approve_and_piped_answers(tmp_path: Path) -> None:
    pipeline = write(tmp_path, "gate.dot", GATE)
    approved = orchestra("run", pipeline, "--auto-approve", "--json", "--quiet", cwd=tmp_path)
    assert "ship" in json.loads(approved.stdout)["completed_nodes"]
    piped = orchestra("run", pipeline, "--json", "--quiet", cwd=tmp_path, stdin="R\n")
    assert "fix" in json.loads(piped.stdout)["completed_nodes"]
    no_answer = orchestra("run", pipeline, "--json", "--quiet", cwd=tmp_path, stdin="")
    assert no_answer.returncode == 1


def test_max_visits_stops_a_loop(tmp_path: Path) -> None:
    pipeline = write(
        tmp_path,
        "loop.dot",
        'digraph loop { start [shape=Mdiamond]; done [shape=Msquare]; a [prompt=x]; start -> a; a -> a; a -> done [condition="outcome=fail"] }',
    )
    result = orchestra("run", pipeline, "--max-visits", "20", "--quiet", cwd=tmp_path)
    assert result.returncode == 1
    assert "stopped after 20 node visits" in result.stdout


def test_resume_of_a_finished_run_reports_the_same_result(tmp_path: Path) -> None:
    pipeline = write(tmp_path, "smoke.dot", SMOKE)
    first = json.loads(orchestra("run", pipeline, "--json", "--quiet", "--logs-root", tmp_path / "r", cwd=tmp_path).stdout)
    again = orchestra("resume", "--logs-root", tmp_path / "r", "--json", "--quiet", cwd=tmp_path)
    assert again.returncode == 0
    assert json.loads(again.stdout) == first


def test_terminal_progress_is_drawn_with_rich(tmp_path: Path) -> None:
    pipeline = write(
        tmp_path,
        "fan.dot",
        """digraph fan {
            start [shape=Mdiamond]; done [shape=Msquare]
            fan [shape=component]; left [prompt=l]; right [prompt=r]; merge [shape=tripleoctagon]
            start -> fan
            fan -> left
            fan -> right
            left -> merge
            right -> merge
            merge -> done
        }""",
    )
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [str(ORCHESTRA), "run", str(pipeline)], stdin=subprocess.DEVNULL, stdout=terminal, stderr=terminal, cwd=tmp_path,
        env={**os.environ, "TERM": "xterm", "COLUMNS": "120"},
    )
    os.close(terminal)
    output = b""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([controller], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(controller, 65536)
            except OSError:
                break
            if not chunk:
                break
            output += chunk
        elif process.poll() is not None:
            break
    os.close(controller)
    assert process.wait(30) == 0
    text = output.decode("utf-8", "replace")
    assert "session " in text and "pipeline succeeded" in text
    assert "left" in text and "right" in text and "Traceback" not in text
