"""Parallel fan-outs, human gates and the manager loop behave as other Attractor runners' pipelines expect
(issue 15, points 4-6), through `orchestra run` / `resume` with `--logs-root`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.e2e.attractor_compat.simulated_runs import checkpoint, node_outcome, run_pipeline
from tests.support.orchestra_project import orchestra


def run(tmp_path: Path, dot: str, *extra: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    """`orchestra run` of the pipeline text, simulated and auto-approved; the result and the logs root."""
    return run_pipeline(tmp_path, dot, "--auto-approve", *extra)


# --- Parallel (point 4) -------------------------------------------------------------------------------

FAN_OUT_WITH_A_FAILING_BRANCH = """digraph review_fan {
    graph [goal="check three ways"]
    begin   [shape=Mdiamond]
    fan     [shape=component]
    lint    [shape=parallelogram, tool_command="echo lint clean"]
    typing  [shape=parallelogram, tool_command="echo 'type error' >&2; exit 4"]
    docs    [shape=box, prompt="Review the docs"]
    gather  [shape=tripleoctagon]
    report  [shape=parallelogram, tool_command="echo reported"]
    finish  [shape=Msquare]
    begin -> fan
    fan -> lint
    fan -> typing
    fan -> docs
    lint -> gather
    typing -> gather
    docs -> gather
    gather -> report -> finish
}
"""


def test_each_branch_status_and_the_fail_count_are_in_the_checkpoint_context(tmp_path: Path) -> None:
    result, logs = run(tmp_path, FAN_OUT_WITH_A_FAILING_BRANCH)
    assert result.returncode == 0, result.stderr + result.stdout
    document = checkpoint(logs)
    context = document["context"]
    assert context["parallel.branch.lint.status"] == "success"
    assert context["parallel.branch.typing.status"] == "fail"
    assert context["parallel.branch.docs.status"] == "success"
    assert context["parallel.fail_count"] == 1
    assert context["parallel.success_count"] == 2
    assert node_outcome(document, "fan")["status"] == "partial_success"  # wait_all with a failed branch
    assert {"gather", "report", "finish"} <= set(document["completed_nodes"])


FAN_OUT_WITH_A_SLOW_BRANCH = """digraph timed_fan {
    graph [goal="one branch overruns"]
    begin  [shape=Mdiamond]
    fan    [shape=component]
    quick  [shape=parallelogram, tool_command="echo quick"]
    sleepy [shape=parallelogram, tool_command="sleep 5; echo sleepy", timeout="10ms"]
    gather [shape=tripleoctagon]
    finish [shape=Msquare]
    begin -> fan
    fan -> quick
    fan -> sleepy
    quick -> gather
    sleepy -> gather
    gather -> finish
}
"""


def test_a_branch_that_passes_its_timeout_is_marked_fail_and_the_fan_in_still_completes(
    tmp_path: Path,
) -> None:
    result, logs = run(tmp_path, FAN_OUT_WITH_A_SLOW_BRANCH)
    assert result.returncode == 0, result.stderr + result.stdout
    document = checkpoint(logs)
    context = document["context"]
    assert context["parallel.branch.quick.status"] == "success"
    assert context["parallel.branch.sleepy.status"] == "fail"
    assert context["parallel.fail_count"] == 1
    assert node_outcome(document, "sleepy")["status"] == "fail"
    assert node_outcome(document, "fan")["status"] == "partial_success"
    assert node_outcome(document, "gather")["status"] == "success"
    assert context["parallel.fan_in.best_id"] == "quick"
    output = (logs / "sleepy" / "tool_output.txt").read_text(encoding="utf-8")
    assert "timed out" in output and "sleepy" not in output.split("--- stdout ---")[1]  # stopped, not awaited


# --- Manager loop (point 6) ---------------------------------------------------------------------------

WATCHING_MANAGER = """digraph watch {{
    graph [goal="wait for the release flag"]
    begin   [shape=Mdiamond]
    prepare [shape=parallelogram, tool_command="echo prepared"]
    watch   [shape=house, max_cycles={cycles}, stop_condition_key="release.approved", wait_ms=1]
    finish  [shape=Msquare]
    begin -> prepare -> watch -> finish
}}
"""


def test_a_manager_without_a_child_fails_after_max_cycles_naming_it(tmp_path: Path) -> None:
    result, logs = run(tmp_path, WATCHING_MANAGER.format(cycles=2))
    assert result.returncode == 1
    assert "manager loop exceeded max_cycles=2" in result.stderr
    document = checkpoint(logs)
    assert node_outcome(document, "watch")["status"] == "fail"
    assert "finish" not in document["completed_nodes"]


def test_a_stop_key_set_in_the_checkpoint_context_lets_the_resumed_run_succeed(tmp_path: Path) -> None:
    result, logs = run(tmp_path, WATCHING_MANAGER.format(cycles=3))
    assert result.returncode == 1, result.stdout
    document = checkpoint(logs)
    document["context"]["release.approved"] = "true"
    (logs / "checkpoint.json").write_text(json.dumps(document), encoding="utf-8")
    resumed = orchestra(
        "resume",
        "--logs-root",
        logs,
        tmp_path / "pipeline.dot",
        "--backend",
        "simulate",
        "--auto-approve",
        cwd=tmp_path,
    )
    assert resumed.returncode == 0, resumed.stderr + resumed.stdout
    after = checkpoint(logs)
    assert node_outcome(after, "watch")["status"] == "success"
    assert after["completed_nodes"][-1] == "finish"
    assert (
        "release.approved"
        in json.loads((logs / "watch" / "status.json").read_text(encoding="utf-8"))["notes"]
    )


def test_stack_child_autostart_false_is_accepted_and_watches_the_context(tmp_path: Path) -> None:
    dot = """digraph watch_only {
        graph [goal="observe only", stack.child_dotfile="missing_child.dot"]
        begin  [shape=Mdiamond]
        flag   [shape=parallelogram, tool_command="echo set"]
        watch  [shape=house, stack.child_autostart=false, manager.stop_condition="tool.output=set",
                manager.max_cycles=2, manager.poll_interval="1ms"]
        finish [shape=Msquare]
        begin -> flag -> watch -> finish
    }
    """
    result, logs = run(tmp_path, dot)
    assert result.returncode == 0, result.stderr + result.stdout
    assert node_outcome(checkpoint(logs), "watch")["status"] == "success"
    assert not (logs / "watch" / "child").exists()  # no child was started


# --- Human gates (point 5) ----------------------------------------------------------------------------

GATES = """digraph gates {
    graph [goal="a changelog entry"]
    begin  [shape=Mdiamond]
    notes  [shape=hexagon, prompt="What changed in $goal?"]
    route  [shape=hexagon, label="Publish how?"]
    draft  [shape=parallelogram, tool_command="echo drafted"]
    blog   [shape=parallelogram, tool_command="echo blogged"]
    finish [shape=Msquare]
    begin -> notes
    notes -> route
    route -> draft [label="D) Draft only"]
    route -> blog  [label="[B] Blog post"]
    draft -> finish
    blog -> finish
}
"""


def test_a_freeform_gate_writes_its_prompt_and_response_and_auto_approve_answers_it(tmp_path: Path) -> None:
    result, logs = run(tmp_path, GATES)
    assert result.returncode == 0, result.stderr + result.stdout
    assert (logs / "notes" / "prompt.md").read_text(encoding="utf-8") == "What changed in a changelog entry?"
    assert (logs / "notes" / "response.md").read_text(encoding="utf-8") == "auto-approved"
    document = checkpoint(logs)
    assert document["completed_nodes"][:3] == ["begin", "notes", "route"]
    assert "draft" in document["completed_nodes"]  # auto-approve takes the first option
    assert (document["context"]["human.gate.selected"], document["context"]["human.gate.label"]) == (
        "D",
        "D) Draft only",
    )


def test_an_answers_file_gives_the_freeform_text_and_the_choice(tmp_path: Path) -> None:
    (tmp_path / "answers.yaml").write_text(
        'notes: "faster startup, fewer files"\nroute: B\n', encoding="utf-8"
    )
    result, logs = run_pipeline(tmp_path, GATES, "--answers", "answers.yaml")  # not auto-approved
    assert result.returncode == 0, result.stderr + result.stdout
    assert (logs / "notes" / "response.md").read_text(encoding="utf-8") == "faster startup, fewer files"
    context = checkpoint(logs)["context"]
    assert context["human.gate.text"] == "faster startup, fewer files"
    assert (context["human.gate.selected"], context["human.gate.label"]) == ("B", "[B] Blog post")
    assert "blog" in checkpoint(logs)["completed_nodes"]


def test_a_freeform_gate_alone_records_its_edge_as_the_selection(tmp_path: Path) -> None:
    dot = """digraph one_gate {
        begin  [shape=Mdiamond]
        ask    [shape=hexagon, label="Any last words?"]
        finish [shape=Msquare]
        begin -> ask -> finish
    }
    """
    result, logs = run(tmp_path, dot)
    assert result.returncode == 0, result.stderr + result.stdout
    context = checkpoint(logs)["context"]
    assert (context["human.gate.selected"], context["human.gate.label"]) == ("F", "finish")
    assert (logs / "ask" / "prompt.md").read_text(encoding="utf-8") == "Any last words?"
