"""Validation as other Attractor runners have it (issue 15, points 2 and 7), through `orchestra compile` and
`orchestra run`: unreachable (orphan) nodes, dead ends, cycles without a way to an exit, several exits, the
pipeline synopsis, and unknown attributes with "did you mean"."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.orchestra_project import orchestra

ORPHAN = """digraph orphaned {
    start [shape=Mdiamond]
    draft [prompt="Draft the notes"]
    forgotten [prompt="Nothing leads here"]
    finish [shape=Msquare]
    start -> draft -> finish
}
"""
ISLAND = """digraph island {
    start [shape=Mdiamond]
    draft [prompt="Draft"]
    left [prompt="Left"]
    right [prompt="Right"]
    finish [shape=Msquare]
    start -> draft -> finish
    left -> right
    right -> finish
}
"""
DEAD_END = """digraph stuck {
    start [shape=Mdiamond]
    triage [prompt="Triage the bug"]
    shelve [prompt="Shelve it"]
    finish [shape=Msquare]
    start -> triage
    triage -> finish [label="fixed"]
    triage -> shelve [label="later"]
}
"""
NO_WAY_OUT = """digraph spinning {
    start [shape=Mdiamond]
    ping [prompt="Ping"]
    pong [prompt="Pong"]
    finish [shape=Msquare]
    start -> ping
    ping -> pong
    pong -> ping
    start -> finish [condition="outcome=fail"]
}
"""
TWO_EXITS = """digraph forked_ending {
    start [shape=Mdiamond]
    decide [prompt="Decide"]
    shipped [shape=Msquare]
    dropped [shape=Msquare]
    start -> decide
    decide -> shipped [label="ship"]
    decide -> dropped [label="drop"]
}
"""
# Branches that end without an edge: each runs until its dead end, then the fan-out goes on to `merge`.
BRANCHES_END_THEMSELVES = """digraph survey {
    start [shape=Mdiamond]
    fan [shape=component, fan_in=merge]
    north [prompt="Survey the north"]
    south [prompt="Survey the south"]
    south_notes [prompt="Write up the south"]
    merge [shape=tripleoctagon]
    report [prompt="Report"]
    finish [shape=Msquare]
    start -> fan
    fan -> north
    fan -> south
    south -> south_notes
    merge -> report -> finish
}
"""
NEVER_JOINED = """digraph scattered {
    start [shape=Mdiamond]
    fan [shape=component]
    north [prompt="North"]
    south [prompt="South"]
    finish [shape=Msquare]
    start -> fan
    fan -> north
    fan -> south
    start -> finish [condition="outcome=fail"]
}
"""
INVALID = {
    "orphan": ORPHAN,
    "island": ISLAND,
    "dead_end": DEAD_END,
    "no_way_out": NO_WAY_OUT,
    "two_exits": TWO_EXITS,
    "never_joined": NEVER_JOINED,
}


def compile_dot(tmp_path: Path, dot: str, *extra: str) -> subprocess.CompletedProcess[str]:
    pipeline = tmp_path / "pipeline.dot"
    pipeline.write_text(dot, encoding="utf-8")
    return orchestra("compile", pipeline, *extra, cwd=tmp_path)


def diagnostics(tmp_path: Path, dot: str) -> list[dict[str, Any]]:
    """`compile --json`'s diagnostics of the pipeline text."""
    found: list[dict[str, Any]] = json.loads(compile_dot(tmp_path, dot, "--json").stdout)["diagnostics"]
    return found


def errors(tmp_path: Path, dot: str) -> list[tuple[str, str | None]]:
    return [(d["rule"], d["node_id"]) for d in diagnostics(tmp_path, dot) if d["severity"] == "error"]


def test_a_node_with_no_edges_is_an_unreachable_orphan_error(tmp_path: Path) -> None:
    result = compile_dot(tmp_path, ORPHAN)
    assert result.returncode == 1
    line = next(line for line in result.stdout.splitlines() if "node forgotten" in line)
    assert line.startswith("error     orphan_node") and "unreachable (orphan)" in line
    assert errors(tmp_path, ORPHAN) == [("orphan_node", "forgotten")]


def test_connected_nodes_nothing_leads_to_are_unreachable_errors(tmp_path: Path) -> None:
    found = [d for d in diagnostics(tmp_path, ISLAND) if d["severity"] == "error"]
    assert [(d["rule"], d["node_id"]) for d in found] == [("reachability", "left"), ("reachability", "right")]
    assert all("unreachable (orphan)" in d["message"] and "start node start" in d["message"] for d in found)


def test_a_stage_without_an_outgoing_edge_is_a_dead_end_error_naming_it(tmp_path: Path) -> None:
    result = compile_dot(tmp_path, DEAD_END)
    assert result.returncode == 1
    assert "node shelve is a dead end" not in result.stdout  # the location is named once, in `where`
    line = next(line for line in result.stdout.splitlines() if line.startswith("error"))
    assert line.split()[:4] == ["error", "dead_end", "node", "shelve"] and "is a dead end" in line
    assert errors(tmp_path, DEAD_END) == [("dead_end", "shelve")]


def test_a_cycle_with_no_way_to_an_exit_is_an_error(tmp_path: Path) -> None:
    found = [d for d in diagnostics(tmp_path, NO_WAY_OUT) if d["severity"] == "error"]
    assert [(d["rule"], d["node_id"]) for d in found] == [("reaches_exit", "ping"), ("reaches_exit", "pong")]
    assert all(d["message"].startswith("cannot reach an exit node") for d in found)


def test_several_exit_nodes_is_an_error_saying_how_many_were_found(tmp_path: Path) -> None:
    result = compile_dot(tmp_path, TWO_EXITS)
    assert result.returncode == 1
    assert "found 2 exit nodes (shipped, dropped)" in result.stdout
    three = TWO_EXITS.replace(
        "dropped [shape=Msquare]", "dropped [shape=Msquare]\n    parked [shape=Msquare]"
    )
    three = three.replace(
        'decide -> dropped [label="drop"]', 'decide -> dropped [label="drop"]\n    decide -> parked'
    )
    assert errors(tmp_path, three) == [("terminal_node", "dropped")]
    assert "found 3 exit nodes" in compile_dot(tmp_path, three).stdout


def test_nodes_that_only_run_inside_parallel_branches_may_end_their_branch(tmp_path: Path) -> None:
    assert compile_dot(tmp_path, BRANCHES_END_THEMSELVES).returncode == 0
    pipeline = tmp_path / "pipeline.dot"
    run = orchestra("run", pipeline, "--backend", "simulate", "--json", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    completed = json.loads(run.stdout)["completed_nodes"]
    assert {"north", "south", "south_notes", "merge", "report"} <= set(completed)


def test_a_dead_end_after_the_fan_in_runs_on_the_main_line_and_is_an_error(tmp_path: Path) -> None:
    dot = BRANCHES_END_THEMSELVES.replace("merge -> report -> finish", "merge -> report\n    merge -> finish")
    assert errors(tmp_path, dot) == [("dead_end", "report")]


def test_a_fan_out_whose_branches_never_join_is_a_dead_end(tmp_path: Path) -> None:
    found = [d for d in diagnostics(tmp_path, NEVER_JOINED) if d["severity"] == "error"]
    assert [(d["rule"], d["node_id"]) for d in found] == [("dead_end", "fan")]
    assert "never meet at a join node" in found[0]["message"] and "fan-in" in found[0]["fix"]


@pytest.mark.parametrize("name", sorted(INVALID))
def test_run_rejects_what_compile_rejects_before_any_session_exists(tmp_path: Path, name: str) -> None:
    pipeline = tmp_path / "pipeline.dot"
    pipeline.write_text(INVALID[name], encoding="utf-8")
    compiled = orchestra("compile", pipeline, cwd=tmp_path)
    run = orchestra("run", pipeline, "--backend", "simulate", "--logs-root", tmp_path / "logs", cwd=tmp_path)
    assert (compiled.returncode, run.returncode) == (1, 1)
    assert "nothing was run" in run.stderr
    assert not (tmp_path / "logs" / "checkpoint.json").exists()
    status = orchestra("status", "--json", cwd=tmp_path)
    assert json.loads(status.stdout)["sessions"] == []


SYNOPSIS_CASES = {
    "PLANNING": (
        'plan [prompt="Plan"]\n review [prompt="Review"]\n start -> plan -> review -> finish',
        "PLANNING pipeline: 2 LLM stages, 0 tool stages, 0 human gates, 0 parallel fan-outs, 4 nodes, 3 edges",
    ),
    "EXECUTION": (
        'build [shape=parallelogram, tool_command="make"]\n start -> build -> finish',
        "EXECUTION pipeline: 0 LLM stages, 1 tool stage, 0 human gates, 0 parallel fan-outs, 3 nodes, 2 edges",
    ),
    "HYBRID": (
        'plan [prompt="Plan"]\n test [shape=parallelogram, tool_command="make test"]\n'
        ' ok [shape=hexagon, label="Ship?"]\n start -> plan -> test -> ok\n ok -> finish [label="yes"]\n'
        ' ok -> plan [label="no"]',
        "HYBRID pipeline: 1 LLM stage, 1 tool stage, 1 human gate, 0 parallel fan-outs, 5 nodes, 5 edges",
    ),
    "CONTROL": (
        'ok [shape=hexagon, label="Go?"]\n start -> ok\n ok -> finish [label="yes"]\n ok -> start2 [label="no"]\n'
        " start2 [shape=diamond]\n start2 -> finish",
        "CONTROL pipeline: 0 LLM stages, 0 tool stages, 1 human gate, 0 parallel fan-outs, 4 nodes, 4 edges",
    ),
}


@pytest.mark.parametrize("kind", sorted(SYNOPSIS_CASES))
def test_compile_prints_a_synopsis_that_classifies_the_pipeline(tmp_path: Path, kind: str) -> None:
    body, line = SYNOPSIS_CASES[kind]
    dot = f"digraph p {{\n start [shape=Mdiamond]\n finish [shape=Msquare]\n {body}\n}}\n"
    result = compile_dot(tmp_path, dot)
    assert result.returncode == 0, result.stdout
    assert f"synopsis: {line}\n" in result.stdout
    synopsis = json.loads(compile_dot(tmp_path, dot, "--json").stdout)["synopsis"]
    assert synopsis["kind"] == kind
    assert list(synopsis) == [
        "kind", "llm_stages", "tool_stages", "human_gates", "parallel_fan_outs", "manager_loops", "nodes", "edges"
    ]  # fmt: skip


def test_the_synopsis_counts_fan_outs_and_is_printed_for_invalid_pipelines_too(tmp_path: Path) -> None:
    result = compile_dot(tmp_path, NEVER_JOINED)
    assert result.returncode == 1
    assert (
        "synopsis: PLANNING pipeline: 2 LLM stages, 0 tool stages, 0 human gates, 1 parallel fan-out"
        in result.stdout
    )


TYPOS = """digraph typos {
    graph [gaol="Ship it", tool_hook.pre="echo pre"]
    start [shape=Mdiamond]
    build [shape=parallelogram, tool_command="make", tool_hooks.psot="echo post", max_visit=3]
    finish [shape=Msquare]
    start -> build [wieght=2]
    build -> finish [confidential="yes"]
}
"""


def test_unknown_attributes_are_warnings_naming_them_with_did_you_mean(tmp_path: Path) -> None:
    result = compile_dot(tmp_path, TYPOS)
    assert result.returncode == 0, result.stdout  # warnings only
    found = {
        (d["node_id"], tuple(d["edge"] or ()), d["message"].split("'")[1]): d
        for d in diagnostics(tmp_path, TYPOS)
        if d["rule"] == "attribute_known"
    }
    assert all(d["severity"] == "warning" for d in found.values())
    hints = {key: d["message"].partition("did you mean ")[2] for key, d in found.items()}
    assert hints == {
        (None, (), "gaol"): "'goal'?",
        (None, (), "tool_hook.pre"): "'tool_hooks.pre'?",
        ("build", (), "tool_hooks.psot"): "'tool_hooks.post'?",
        ("build", (), "max_visit"): "'max_visits'?",
        (None, ("start", "build"), "wieght"): "'weight'?",
        (None, ("build", "finish"), "confidential"): "",
    }
    assert "graph.gaol" in found[(None, (), "gaol")]["message"]  # still in the run context under that name


ATTRACTOR_ATTRIBUTES = """digraph everything {
    graph [goal="g", label="L", model_stylesheet="* { llm_model: m; }", default_max_retries=1,
           default_max_retry=1, default_fidelity=compact, retry_target=plan, fallback_retry_target=plan,
           stack.child_dotfile="child.dot", stack.child_workdir=".", tool_hooks.pre="true",
           tool_hooks.post="true"]
    start [shape=Mdiamond]
    plan [label="Plan", shape=box, type=codergen, prompt="p", max_retries=1, goal_gate=true,
          retry_target=plan, fallback_retry_target=plan, fidelity=full, thread_id=t, class="a,b",
          timeout=10s, llm_model=m, llm_provider=anthropic, reasoning_effort=low, auto_status=true,
          allow_partial=true, max_visits=3]
    build [shape=parallelogram, tool_command="true", tool_hooks.pre="true", tool_hooks.post="true"]
    watch [shape=house, max_cycles=3, stop_condition_key=done, wait_ms=10, stack.child_autostart=false]
    finish [shape=Msquare]
    start -> plan [label="go", condition="outcome=success", weight=1, fidelity=full, thread_id=t,
                   loop_restart=false]
    plan -> build -> watch -> finish
}
"""


def test_the_spec_attributes_and_those_other_runners_honour_are_all_known(tmp_path: Path) -> None:
    found = diagnostics(tmp_path, ATTRACTOR_ATTRIBUTES)
    assert [d for d in found if d["rule"] in ("attribute_known", "attribute_type")] == []


def test_typed_new_attributes_are_checked(tmp_path: Path) -> None:
    dot = ATTRACTOR_ATTRIBUTES.replace("max_cycles=3", "max_cycles=lots").replace("wait_ms=10", "wait_ms=-5")
    found = [d for d in diagnostics(tmp_path, dot) if d["rule"] == "attribute_type"]
    assert [(d["node_id"], d["message"].split("=")[0]) for d in found] == [
        ("watch", "max_cycles"),
        ("watch", "wait_ms"),
    ]
