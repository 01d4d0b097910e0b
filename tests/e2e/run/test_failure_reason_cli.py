"""A failed run says why: `failure_reason` in the JSON of `run`, `resume` and `replay` names the failing node
and its outcome's reason (a tool's exit status and stderr tail), the human output ends with the same line,
and a goal gate that sends the run back says which gate and where to (through the CLI in subprocesses)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.orchestra_project import open_store, orchestra, write_files
from tests.support.sessions import story, turns

FAILING = """digraph failing {
    start [shape=Mdiamond]; done [shape=Msquare]
    check [shape=parallelogram, tool_command="echo first line >&2; echo 'test_hello failed: 1 != 2' >&2; exit 3"]
    start -> check -> done
}
"""
# The gate fails every time; its retry target sends the run back until --max-visits stops it.
GATED = """digraph gated {
    start [shape=Mdiamond]; done [shape=Msquare]
    fix  [shape=parallelogram, tool_command="echo fixing"]
    test [shape=parallelogram, tool_command="echo 'test_x failed' >&2; exit 1", goal_gate=true, retry_target=fix]
    start -> test
    start -> fix [condition="context.never=1"]
    test -> done [condition="outcome=fail"]
    test -> done
    fix -> test
}
"""
UNGUARDED = """digraph unguarded {
    start [shape=Mdiamond]; done [shape=Msquare]
    test [shape=parallelogram, tool_command="echo 'test_x failed' >&2; exit 1", goal_gate=true]
    start -> test
    test -> done [condition="outcome=fail"]
}
"""
TOOL_REASON = "stage check failed: exit code 3: first line; test_hello failed: 1 != 2"


def run(project: Path, *args: str) -> tuple[int, str, str]:
    result = orchestra(*args, "--backend", "simulate", cwd=project)
    return result.returncode, result.stdout, result.stderr


def test_a_failed_run_says_which_node_failed_and_why_in_json_and_at_the_end(tmp_path: Path) -> None:
    write_files(tmp_path, {"failing.dot": FAILING})
    code, out, err = run(tmp_path, "run", "failing.dot", "--json")
    document = json.loads(out)
    assert code == 1, err
    assert document["status"] == "fail" and document["failure_reason"] == TOOL_REASON

    code, out, _ = run(tmp_path, "run", "failing.dot")
    assert code == 1
    assert out.splitlines()[-1] == f"failure {TOOL_REASON}"
    code, out, _ = run(tmp_path, "run", "failing.dot", "--quiet")
    assert out.splitlines() == [out.splitlines()[0], f"fail: {TOOL_REASON}"]


def test_resume_and_replay_of_a_failed_run_report_the_same_reason(tmp_path: Path) -> None:
    write_files(tmp_path, {"failing.dot": FAILING})
    code, out, _ = run(tmp_path, "run", "failing.dot", "--json")
    session = json.loads(out)["session_id"]

    code, out, _ = run(tmp_path, "resume", session, "--json")
    assert code == 1 and json.loads(out)["failure_reason"] == TOOL_REASON
    code, out, _ = run(tmp_path, "resume", session)
    assert code == 1 and out.splitlines()[-1] == f"failure {TOOL_REASON}"  # the failed node ran again, failed again

    start = _first_checkpoint(tmp_path, session)
    code, out, err = run(tmp_path, "replay", session, "--checkpoint", start, "--json")
    replayed = json.loads(out)
    assert code == 1, err
    assert replayed["session_id"] != session and replayed["failure_reason"] == TOOL_REASON
    code, out, _ = run(tmp_path, "replay", session, "--checkpoint", start)
    assert code == 1 and out.splitlines()[-1] == f"failure {TOOL_REASON}"


def _first_checkpoint(project: Path, session: str) -> str:
    """The turn id of the session's checkpoint after its start node (before the failing node ran)."""
    with open_store(project) as store:
        return turns(store, session)[story(store, session).index("checkpoint start")].turn_id


def test_a_goal_gate_that_sends_the_run_back_says_which_gate_and_where_to(tmp_path: Path) -> None:
    write_files(tmp_path, {"gated.dot": GATED})
    code, out, _ = run(tmp_path, "run", "gated.dot", "--max-visits", "6")
    assert code == 1
    gate_lines = [line for line in out.splitlines() if "goal gate" in line and line.startswith("!")]
    assert gate_lines == ["! goal gate test is unsatisfied (fail: exit code 1: test_x failed): back to fix"] * 3
    last = out.splitlines()[-1]
    assert last.startswith(
        "failure goal gate test is unsatisfied (fail: exit code 1: test_x failed) and sends the run back to fix; "
        "stopped after 6 node visits"
    )

    code, out, _ = run(tmp_path, "run", "gated.dot", "--max-visits", "6", "--json")
    reason = json.loads(out)["failure_reason"]
    assert reason == last.removeprefix("failure ")


def test_a_goal_gate_without_a_retry_target_names_itself_and_its_reason(tmp_path: Path) -> None:
    write_files(tmp_path, {"unguarded.dot": UNGUARDED})
    code, out, _ = run(tmp_path, "run", "unguarded.dot", "--json")
    assert code == 1
    assert json.loads(out)["failure_reason"] == (
        "goal gate test is unsatisfied (fail: exit code 1: test_x failed) and has no retry target"
    )
