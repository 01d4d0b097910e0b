"""Node attributes other Attractor runners honour (issue 15, point 3): max_visits, auto_status, max_retries,
tool_hooks, goal gates, and a failed run's reason on stderr, through `orchestra run` with `--logs-root`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.support.orchestra_project import orchestra


def run(tmp_path: Path, dot: str, *extra: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    """`orchestra run` of the pipeline text, simulated; the result and the logs root."""
    pipeline = tmp_path / "pipeline.dot"
    pipeline.write_text(dot, encoding="utf-8")
    logs = tmp_path / "logs"
    result = orchestra("run", pipeline, "--backend", "simulate", "--logs-root", logs, *extra, cwd=tmp_path)
    return result, logs


def checkpoint(logs: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((logs / "checkpoint.json").read_text(encoding="utf-8"))
    return document


def outcome(logs: Path, node: str) -> dict[str, Any]:
    """A node's outcome in checkpoint.json as an object (the older plain-string form becomes {"status"})."""
    value = checkpoint(logs)["node_outcomes"][node]
    return value if isinstance(value, dict) else {"status": value}


def stderr_reason(result: subprocess.CompletedProcess[str]) -> str:
    """The failed run's one-line reason, the last line on stderr."""
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("orchestra: error: session "), result.stderr
    return last


# --- max_visits -----------------------------------------------------------------------------------------

SPINNING = """digraph spinning {
    graph [goal="poll until ready"]
    begin [shape=Mdiamond]
    poll  [shape=parallelogram, max_visits=4, tool_command="echo x >> \\"$ATTRACTOR_LOGS_ROOT/polls\\""]
    ready [shape=Msquare]
    begin -> poll
    poll -> ready [condition="context.tool.output=ready"]
    poll -> poll
}
"""


def test_a_loop_over_a_node_with_max_visits_fails_on_the_visit_after_the_limit(tmp_path: Path) -> None:
    result, logs = run(tmp_path, SPINNING)
    assert result.returncode == 1, result.stderr
    assert (logs / "polls").read_text(encoding="utf-8") == "x\n" * 4
    assert "node poll exceeded max_visits=4" in stderr_reason(result)
    document = checkpoint(logs)
    assert document["completed_nodes"] == ["begin", "poll", "poll", "poll", "poll"]


# --- goal gates -----------------------------------------------------------------------------------------

PARTIAL_GATE = """digraph partial_gate {
    graph [goal="mostly there"]
    begin [shape=Mdiamond]
    gate  [shape=parallelogram, goal_gate=true,
           tool_command="printf '{\\"outcome\\": \\"partial_success\\", \\"notes\\": \\"2 of 3\\"}' > \\"$ATTRACTOR_STAGE_DIR/status.json\\""]
    end   [shape=Msquare]
    begin -> gate -> end
}
"""
FAILING_GATE = """digraph failing_gate {
    graph [goal="must pass"]
    begin [shape=Mdiamond]
    tests [shape=parallelogram, goal_gate=true, tool_command="echo '3 tests failed' >&2; exit 1"]
    end   [shape=Msquare]
    begin -> tests -> end
}
"""


def test_a_goal_gate_with_partial_success_is_satisfied(tmp_path: Path) -> None:
    result, logs = run(tmp_path, PARTIAL_GATE)
    assert result.returncode == 0, result.stderr
    assert outcome(logs, "gate")["status"] == "partial_success"
    assert json.loads((logs / "gate" / "status.json").read_text(encoding="utf-8"))["outcome"] == "partial_success"


def test_a_failed_goal_gate_without_a_failure_route_fails_the_run_saying_goal_gate(tmp_path: Path) -> None:
    result, _ = run(tmp_path, FAILING_GATE, "--json")
    assert result.returncode == 1
    reason = json.loads(result.stdout)["failure_reason"]
    assert reason == "goal gate tests is unsatisfied (fail: exit code 1: 3 tests failed) and has no retry target"
    assert stderr_reason(result) == f"orchestra: error: session 1 failed: {reason}"


# --- the failure reason on stderr -----------------------------------------------------------------------


def test_a_failed_run_says_why_on_stderr_with_quiet_and_json_and_keeps_stdout(tmp_path: Path) -> None:
    plain, _ = run(tmp_path, FAILING_GATE)
    reason = "goal gate tests is unsatisfied (fail: exit code 1: 3 tests failed) and has no retry target"
    assert plain.stdout.splitlines()[-1] == f"failure {reason}"
    assert stderr_reason(plain).endswith(f" failed: {reason}")

    quiet, _ = run(tmp_path, FAILING_GATE, "-q")
    assert quiet.stdout.splitlines()[-1] == f"fail: {reason}"
    assert quiet.stderr.splitlines() == [stderr_reason(quiet)]

    as_json, _ = run(tmp_path, FAILING_GATE, "--json")
    assert json.loads(as_json.stdout)["status"] == "fail"  # stdout is the JSON document only
    assert stderr_reason(as_json).endswith(f" failed: {reason}")

    resumed = orchestra("resume", "1", "--backend", "simulate", cwd=tmp_path)
    assert resumed.returncode == 1
    assert stderr_reason(resumed).endswith(f" failed: {reason}")


def test_a_successful_run_writes_nothing_on_stderr_with_quiet(tmp_path: Path) -> None:
    result, _ = run(tmp_path, PARTIAL_GATE, "-q")
    assert result.returncode == 0
    assert result.stderr == ""
