"""Node attributes other Attractor runners honour (issue 15, point 3): max_visits, auto_status, max_retries,
tool_hooks, goal gates, and a failed run's reason on stderr, through `orchestra run` with `--logs-root`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.e2e.attractor_compat.simulated_runs import checkpoint, node_outcome
from tests.e2e.attractor_compat.simulated_runs import run_pipeline as run
from tests.support.orchestra_project import orchestra


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
    assert node_outcome(checkpoint(logs), "gate")["status"] == "partial_success"
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


# --- auto_status ----------------------------------------------------------------------------------------

AUTO_STATUS = """digraph auto {
    graph [goal="best effort"]
    begin [shape=Mdiamond]
    flaky [shape=parallelogram, auto_status=true, tool_command="echo 'warming up' >&2; exit 5"]
    after [shape=parallelogram, tool_command="echo after"]
    end   [shape=Msquare]
    begin -> flaky -> after -> end
}
"""


def test_auto_status_turns_a_command_that_wrote_no_status_into_success_without_a_status_file(tmp_path: Path) -> None:
    result, logs = run(tmp_path, AUTO_STATUS)
    assert result.returncode == 0, result.stderr
    flaky = node_outcome(checkpoint(logs), "flaky")
    assert flaky["status"] == "success"
    assert flaky["notes"] == "auto_status synthesized success (exit code 5)"
    assert not (logs / "flaky" / "status.json").exists()
    assert "# exit code 5" in (logs / "flaky" / "tool_output.txt").read_text(encoding="utf-8")
    assert (logs / "after" / "status.json").exists()  # stages without auto_status keep theirs


WRITES_FAIL = r"""digraph auto_writes {
    begin [shape=Mdiamond]
    flaky [shape=parallelogram, auto_status=true,
           tool_command="printf '{\"outcome\": \"fail\", \"failure_reason\": \"not ready\"}' > \"$ATTRACTOR_STAGE_DIR/status.json\""]
    end   [shape=Msquare]
    begin -> flaky -> end
}
"""


def test_auto_status_leaves_the_decision_to_a_status_file_the_command_wrote(tmp_path: Path) -> None:
    result, logs = run(tmp_path, WRITES_FAIL)
    assert result.returncode == 1
    assert node_outcome(checkpoint(logs), "flaky")["status"] == "fail"
    assert "stage flaky failed: not ready" in stderr_reason(result)


def test_auto_status_does_not_excuse_a_timeout(tmp_path: Path) -> None:
    slow = AUTO_STATUS.replace("exit 5", "sleep 30").replace("auto_status=true,", 'auto_status=true, timeout="1s",')
    result, logs = run(tmp_path, slow)
    assert result.returncode == 1
    assert node_outcome(checkpoint(logs), "flaky")["status"] == "fail"
    assert "timed out after 1s" in stderr_reason(result)


# --- max_retries ----------------------------------------------------------------------------------------

THIRD_TIME_LUCKY = """digraph retrying {
    graph [goal="survive a flaky step"]
    begin [shape=Mdiamond]
    fetch [shape=parallelogram, max_retries=2, retry_jitter=false,
           tool_command="n=$(cat \\"$ATTRACTOR_LOGS_ROOT/tries\\" 2>/dev/null || echo 0); n=$((n+1)); echo $n > \\"$ATTRACTOR_LOGS_ROOT/tries\\"; test $n -ge 3 || { echo \\"try $n failed\\" >&2; exit 1; }; echo fetched"]
    end   [shape=Msquare]
    begin -> fetch -> end
}
"""


def test_max_retries_runs_a_failing_command_again_with_backoff_until_it_succeeds(tmp_path: Path) -> None:
    result, logs = run(tmp_path, THIRD_TIME_LUCKY)
    assert result.returncode == 0, result.stderr
    assert (logs / "tries").read_text(encoding="utf-8") == "3\n"
    document = checkpoint(logs)
    assert node_outcome(document, "fetch")["status"] == "success"
    assert document["node_retries"] == {"fetch": 2}
    assert document["completed_nodes"] == ["begin", "fetch", "end"]
    # the spec's standard backoff (3.6): 200 ms, then doubled (jitter off to see it exactly)
    retried = [line for line in result.stdout.splitlines() if line.startswith("~ fetch retrying")]
    assert retried == ["~ fetch retrying (attempt 2) in 200ms", "~ fetch retrying (attempt 3) in 400ms"]


def test_max_retries_gives_up_after_its_attempts(tmp_path: Path) -> None:
    result, logs = run(tmp_path, THIRD_TIME_LUCKY.replace("max_retries=2", "max_retries=1"))
    assert result.returncode == 1
    assert (logs / "tries").read_text(encoding="utf-8") == "2\n"
    assert "stage fetch failed: exit code 1: try 2 failed" in stderr_reason(result)


# --- tool_hooks -----------------------------------------------------------------------------------------

RECORD = 'echo "$1 $TOOL_NAME $NODE_ID [$EXIT_CODE] $ATTRACTOR_NODE_ID $ORCHESTRA_NODE_ID $(pwd)" >> "$ATTRACTOR_STAGE_DIR/hooks.txt"'
HOOKED = """digraph hooked {
    graph [goal="audit every command", tool_hooks.post="sh record.sh post; echo post-ran > \\"$ATTRACTOR_LOGS_ROOT/graph-post\\""]
    begin [shape=Mdiamond]
    build [shape=parallelogram, tool_workdir="src", tool_command="echo built > \\"$ATTRACTOR_STAGE_DIR/built\\"; exit 3",
           tool_hooks.pre="sh ../record.sh pre", tool_hooks.post="sh ../record.sh post; test -d \\"$ATTRACTOR_LOGS_ROOT\\""]
    end   [shape=Msquare]
    begin -> build
    build -> end [condition="outcome=fail"]
}
"""


def test_tool_hooks_run_around_a_tool_command_with_the_attractor_variables(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "record.sh").write_text(RECORD + "\n", encoding="utf-8")
    result, logs = run(tmp_path, HOOKED)
    assert result.returncode == 0, result.stderr
    lines = (logs / "build" / "hooks.txt").read_text(encoding="utf-8").splitlines()
    src = (tmp_path / "src").resolve()
    assert lines == [f"pre shell build [] build build {src}", f"post shell build [3] build build {src}"]
    assert (logs / "build" / "built").exists()
    assert not (logs / "graph-post").exists()  # the node's own post-hook replaced the graph's
    output = (logs / "build" / "tool_output.txt").read_text(encoding="utf-8")
    assert "--- tool_hooks.pre for shell on node build: exit 0 ---" in output
    assert "--- tool_hooks.post for shell on node build: exit 0 ---" in output


def test_a_failing_pre_hook_skips_the_command_and_fails_the_node(tmp_path: Path) -> None:
    blocked = HOOKED.replace('tool_hooks.pre="sh ../record.sh pre"', 'tool_hooks.pre="echo frozen >&2; exit 9"')
    blocked = blocked.replace('build -> end [condition="outcome=fail"]', "build -> end")
    (tmp_path / "src").mkdir()
    (tmp_path / "record.sh").write_text(RECORD + "\n", encoding="utf-8")
    result, logs = run(tmp_path, blocked)
    assert result.returncode == 1
    assert not (logs / "build" / "built").exists()
    assert not (logs / "build" / "hooks.txt").exists()  # no post-hook either: nothing ran
    assert stderr_reason(result).endswith(
        "stage build failed: the tool_hooks.pre hook failed (exit code 9: frozen); the command did not run"
    )
    assert "frozen" in (logs / "build" / "tool_output.txt").read_text(encoding="utf-8")


def test_a_failing_post_hook_is_recorded_and_leaves_the_outcome_alone(tmp_path: Path) -> None:
    pipeline = """digraph audited {
        graph [tool_hooks.post="echo 'audit log is down' >&2; exit 4"]
        begin [shape=Mdiamond]
        step  [shape=parallelogram, tool_command="echo stepped"]
        end   [shape=Msquare]
        begin -> step -> end
    }
    """
    result, logs = run(tmp_path, pipeline)
    assert result.returncode == 0, result.stderr
    step = node_outcome(checkpoint(logs), "step")
    assert step["status"] == "success"
    assert step["notes"] == (
        "Tool completed: echo stepped; the tool_hooks.post hook failed (exit code 4: audit log is down) "
        "(recorded; the outcome stands)"
    )
    output = (logs / "step" / "tool_output.txt").read_text(encoding="utf-8")
    assert "--- tool_hooks.post for shell on node step: exit 4 ---" in output and "audit log is down" in output
