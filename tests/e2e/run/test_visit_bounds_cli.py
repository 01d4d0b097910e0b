"""A loop never runs forever by default (issue 31, item 5): `orchestra init`'s starter as it was (an unbounded
implement -> check loop) ends quickly under `--backend simulate` with a message that says which node, how
often and how to raise the bound; the starter `init` writes now bounds its loop itself; `max_visits=0` lifts
the bound for a loop that ends by itself after more visits than the default."""

from __future__ import annotations

import json
import time
from pathlib import Path

from orchestra_cli.init_templates import PIPELINE_DOT
from orchestra_core.graph.visits import DEFAULT_MAX_VISITS
from tests.support.orchestra_project import orchestra

# The starter `orchestra init` wrote before its loop had a bound.
UNBOUNDED_STARTER = """\
digraph starter {
    graph [goal="Add a hello world script", label="Starter"]

    start     [shape=Mdiamond]
    exit      [shape=Msquare]

    implement [label="Implement", prompt="Reach the goal: $goal. Write the files with your tools."]
    check     [shape=parallelogram, label="Run it", tool_command="python3 hello.py"]

    start -> implement -> check
    check -> exit      [condition="outcome=success"]
    check -> implement [condition="outcome=fail", label="Fix"]
}
"""


def simulate(tmp_path: Path, dot: str, *extra: str) -> tuple[int, str, dict, float]:
    (tmp_path / "pipeline.dot").write_text(dot, encoding="utf-8")
    started = time.monotonic()
    result = orchestra("run", "pipeline.dot", "--backend", "simulate", "--json", *extra, cwd=tmp_path, timeout=90)
    return result.returncode, result.stderr, json.loads(result.stdout), time.monotonic() - started


def test_the_unbounded_starter_ends_quickly_saying_which_node_how_often_and_how_to_raise_the_bound(
    tmp_path: Path,
) -> None:
    (tmp_path / "pipeline.dot").write_text(UNBOUNDED_STARTER, encoding="utf-8")
    warned = orchestra("compile", "pipeline.dot", cwd=tmp_path)
    assert warned.returncode == 0 and "loop_bound" in warned.stdout

    code, stderr, document, took = simulate(tmp_path, UNBOUNDED_STARTER)
    assert code == 1 and document["status"] == "fail"
    reason = (
        f"node implement exceeded the default visit bound ({DEFAULT_MAX_VISITS} runs of a node): it already ran "
        f"{DEFAULT_MAX_VISITS} times and a loop led back to it; to allow more, set max_visits=N on implement or "
        "default_max_visits=N on the graph (0 lifts the bound)"
    )
    assert document["failure_reason"] == reason
    assert document["completed_nodes"].count("implement") == DEFAULT_MAX_VISITS
    assert f"session {document['session_id']} failed: {reason}" in stderr
    assert took < 60


def test_the_starter_init_writes_bounds_its_loop_itself(tmp_path: Path) -> None:
    (tmp_path / "pipeline.dot").write_text(PIPELINE_DOT, encoding="utf-8")
    compiled = orchestra("compile", "pipeline.dot", cwd=tmp_path)
    assert compiled.returncode == 0 and "warning" not in compiled.stdout, compiled.stdout
    code, _, document, _ = simulate(tmp_path, PIPELINE_DOT)
    assert code == 1
    assert document["failure_reason"].startswith("node implement exceeded max_visits=5: it already ran 5 times")
    assert document["failure_reason"].endswith("raise max_visits=N on implement (max_visits=0 lifts its bound)")


# `count` adds one to a file and succeeds from the 25th time on: more visits than the default bound allows.
COUNTER = """digraph counter {
    start [shape=Mdiamond]
    exit  [shape=Msquare]
    count [shape=parallelogram, tool_command="n=$(cat n 2>/dev/null || echo 0); n=$((n+1)); echo $n > n; test $n -ge 25"%s]
    start -> count
    count -> exit  [condition="outcome=success"]
    count -> count [condition="outcome=fail"]
}
"""


def test_max_visits_zero_lifts_the_bound_for_a_loop_that_ends_by_itself(tmp_path: Path) -> None:
    code, _, document, _ = simulate(tmp_path, COUNTER % ", max_visits=0")
    assert code == 0, document
    assert document["status"] == "success" and document["completed_nodes"].count("count") == 25
    assert (tmp_path / "n").read_text().strip() == "25"


def test_without_it_the_same_loop_stops_at_the_default_bound(tmp_path: Path) -> None:
    code, _, document, _ = simulate(tmp_path, COUNTER % "")
    assert code == 1
    assert document["failure_reason"].startswith(f"node count exceeded the default visit bound ({DEFAULT_MAX_VISITS}")
    assert (tmp_path / "n").read_text().strip() == str(DEFAULT_MAX_VISITS)
