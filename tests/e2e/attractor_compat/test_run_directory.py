"""A run directory a script written for other Attractor runners can read (issue 15, point 1): checkpoint.json,
manifest.json, `restart-<n>/` after a loop restart, context.json per LLM stage; and the resume of a failed
run, through `orchestra run` / `resume` with `--logs-root` (and the session store) in subprocesses."""

from __future__ import annotations

import json
import subprocess
from datetime import datetime
from pathlib import Path

from tests.e2e.attractor_compat.simulated_runs import read_json as read
from tests.e2e.attractor_compat.simulated_runs import run_pipeline as run
from tests.support.orchestra_project import orchestra


def resume(tmp_path: Path, logs: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return orchestra("resume", "--logs-root", logs, "--backend", "simulate", *extra, cwd=tmp_path)


REVIEWED = """digraph reviewed_change {
    graph [goal="Ship a reviewed change", label="Reviewed change"]
    start  [shape=Mdiamond]
    plan   [shape=box, prompt="Plan the change"]
    lint   [shape=parallelogram, tool_command="echo 'style: 2 problems' >&2; exit 2"]
    fix    [shape=box, prompt="Fix the style problems"]
    finish [shape=Msquare]
    start -> plan -> lint
    lint -> fix    [condition="outcome=fail"]
    lint -> finish [condition="outcome=success"]
    fix -> finish
}
"""


def test_checkpoint_node_outcomes_are_objects_with_status_and_notes(tmp_path: Path) -> None:
    result, logs = run(tmp_path, REVIEWED)
    assert result.returncode == 0, result.stderr
    document = read(logs / "checkpoint.json")
    outcomes = document["node_outcomes"]
    assert {node: outcome["status"] for node, outcome in outcomes.items()} == {
        "start": "success", "plan": "success", "lint": "fail", "fix": "success", "finish": "success"
    }
    assert all(isinstance(outcome["notes"], str) for outcome in outcomes.values())
    assert outcomes["plan"]["notes"] == "Stage completed: plan"
    assert "exit code 2" in outcomes["lint"]["failure_reason"] and "failure_reason" not in outcomes["plan"]
    assert "outcome_details" not in document
    assert document["completed_nodes"] == ["start", "plan", "lint", "fix", "finish"]
    assert document["context"]["graph.goal"] == "Ship a reviewed change"


def test_manifest_has_the_graph_name_goal_label_and_start_time(tmp_path: Path) -> None:
    before = datetime.now().astimezone()
    result, logs = run(tmp_path, REVIEWED)
    assert result.returncode == 0, result.stderr
    manifest = read(logs / "manifest.json")
    assert (manifest["name"], manifest["goal"], manifest["label"]) == (
        "reviewed_change", "Ship a reviewed change", "Reviewed change"
    )
    started = datetime.fromisoformat(manifest["start_time"])
    assert started.tzinfo is not None and started >= before.replace(microsecond=0)


# The first round's check fails and restarts the run; the second passes. `noise` leaves context behind.
RESTARTING = """digraph restarting {
    graph [goal="Converge"]
    start [shape=Mdiamond]
    noise [shape=box, prompt="Write notes"]
    check [shape=parallelogram, tool_command="n=$(cat ROUNDS 2>/dev/null || echo 0); echo $((n+1)) > ROUNDS; test $n -ge 1"]
    done  [shape=Msquare]
    start -> noise -> check
    check -> done  [condition="outcome=success"]
    check -> noise [condition="outcome=fail", loop_restart=true]
}
"""


def test_a_loop_restart_writes_the_new_round_under_restart_1_with_a_fresh_context(tmp_path: Path) -> None:
    result, logs = run(tmp_path, RESTARTING.replace("ROUNDS", str(tmp_path / "rounds")), "--set", "ticket=T-9")
    assert result.returncode == 0, result.stderr
    assert read(logs / "check" / "status.json")["outcome"] == "fail"
    assert read(logs / "restart-1" / "check" / "status.json")["outcome"] == "success"
    assert (logs / "restart-1" / "noise" / "prompt.md").is_file()
    assert not (logs / "restart-1" / "manifest.json").exists()
    round_one = read(logs / "restart-1" / "checkpoint.json")
    assert round_one == read(logs / "checkpoint.json")  # the root's stays the run's latest
    assert round_one["completed_nodes"] == ["noise", "check", "done"]
    assert round_one["loop_restarts"] == 1
    # the context the new round started with: graph.* and the --set values only (current_node is the stage's own)
    first_seen = read(logs / "restart-1" / "noise" / "context.json")
    assert {key for key in first_seen if not key.startswith("graph.")} == {"ticket", "current_node"}
    assert first_seen["ticket"] == "T-9" and first_seen["graph.goal"] == "Converge"


TRUNCATED = """digraph projection {
    start [shape=Mdiamond]
    gen   [shape=parallelogram, tool_command="python3 -c \\"print('Y' * 1200)\\""]
    sink  [shape=box, prompt="Summarise"]
    full  [shape=box, prompt="Look at everything"]
    done  [shape=Msquare]
    start -> gen
    gen -> sink  [fidelity="truncate"]
    sink -> full [fidelity="full"]
    full -> done
}
"""


def test_each_llm_stage_has_context_json_after_fidelity_projection(tmp_path: Path) -> None:
    result, logs = run(tmp_path, TRUNCATED)
    assert result.returncode == 0, result.stderr
    truncated = read(logs / "sink" / "context.json")
    assert all(isinstance(value, str) and len(value) <= 500 for value in truncated.values())
    assert truncated["tool.output"].startswith("YYY") and len(truncated["tool.output"]) == 500
    full = read(logs / "full" / "context.json")
    assert len(full["tool.output"].strip()) == 1200
    assert not [key for document in (truncated, full) for key in document if key.startswith("internal.")]
    assert not (logs / "gen" / "context.json").exists()


# `build` passes once the checkpoint's context says the fix is in (a user edits checkpoint.json).
PATCHABLE = """digraph patchable {
    start [shape=Mdiamond]
    plan  [shape=box, prompt="Plan"]
    build [shape=parallelogram, tool_command="python3 -c \\"import json, os, sys; c = json.load(open(os.path.join(os.environ['ORCHESTRA_LOGS_ROOT'], 'checkpoint.json')))['context']; sys.exit(0 if c.get('fixed') == 'yes' else 3)\\""]
    ship  [shape=box, prompt="Ship"]
    done  [shape=Msquare]
    start -> plan -> build -> ship -> done
}
"""


def test_resume_of_a_failed_run_directory_runs_the_failed_node_again_with_the_edited_context(
    tmp_path: Path,
) -> None:
    failed, logs = run(tmp_path, PATCHABLE)
    assert failed.returncode == 1
    checkpoint = read(logs / "checkpoint.json")
    assert (checkpoint["status"], checkpoint["current_node"]) == ("fail", "build")
    checkpoint["context"]["fixed"] = "yes"
    (logs / "checkpoint.json").write_text(json.dumps(checkpoint), encoding="utf-8")
    resumed = resume(tmp_path, logs, "--json")
    assert resumed.returncode == 0, resumed.stderr
    document = json.loads(resumed.stdout)
    assert document["status"] == "success" and document["context"]["fixed"] == "yes"
    assert document["completed_nodes"] == ["start", "plan", "build", "build", "ship", "done"]
    assert read(logs / "build" / "status.json")["outcome"] == "success"


def test_a_failed_run_fails_again_on_resume_when_its_node_fails_again(tmp_path: Path) -> None:
    failed, logs = run(tmp_path, PATCHABLE)
    assert failed.returncode == 1
    again = resume(tmp_path, logs, "--json")
    assert again.returncode == 1
    document = json.loads(again.stdout)
    assert document["completed_nodes"] == ["start", "plan", "build", "build"]
    assert "exit code 3" in document["failure_reason"]


GUARDED = """digraph guarded {
    start [shape=Mdiamond]
    build [shape=parallelogram, tool_command="test -f MARKER"]
    done  [shape=Msquare]
    start -> build -> done
}
"""


def test_resume_of_a_failed_session_runs_the_failed_node_again(tmp_path: Path) -> None:
    marker = tmp_path / "fixed"
    pipeline = tmp_path / "guarded.dot"
    pipeline.write_text(GUARDED.replace("MARKER", str(marker)), encoding="utf-8")
    failed = orchestra("run", pipeline, "--backend", "simulate", "--json", cwd=tmp_path)
    assert failed.returncode == 1
    session = json.loads(failed.stdout)["session_id"]
    marker.write_text("done\n", encoding="utf-8")
    resumed = orchestra("resume", session, "--backend", "simulate", "--json", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["completed_nodes"] == ["start", "build", "build", "done"]
    finished = orchestra("resume", session, cwd=tmp_path)
    assert finished.returncode == 0 and "already ended (success); nothing to resume" in finished.stdout


# Round 1 fails at `build` (round 0's check restarted the run); the resume keeps writing into restart-1/.
RESTART_THEN_FAIL = """digraph restart_then_fail {
    start [shape=Mdiamond]
    check [shape=parallelogram, tool_command="n=$(cat ROUNDS 2>/dev/null || echo 0); echo $((n+1)) > ROUNDS; test $n -ge 1"]
    build [shape=parallelogram, tool_command="test -f MARKER"]
    done  [shape=Msquare]
    start -> check
    check -> build [condition="outcome=success"]
    check -> check [condition="outcome=fail", loop_restart=true]
    build -> done
}
"""


def test_a_resumed_run_after_a_loop_restart_keeps_writing_into_its_round(tmp_path: Path) -> None:
    marker = tmp_path / "fixed"
    dot = RESTART_THEN_FAIL.replace("ROUNDS", str(tmp_path / "rounds")).replace("MARKER", str(marker))
    failed, logs = run(tmp_path, dot)
    assert failed.returncode == 1
    assert read(logs / "restart-1" / "build" / "status.json")["outcome"] == "fail"
    marker.write_text("done\n", encoding="utf-8")
    resumed = resume(tmp_path, logs)
    assert resumed.returncode == 0, resumed.stderr
    assert read(logs / "restart-1" / "build" / "status.json")["outcome"] == "success"
    assert read(logs / "restart-1" / "checkpoint.json")["status"] == "success"
    assert not (logs / "build").exists() and not (logs / "restart-2").exists()
