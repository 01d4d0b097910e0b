"""Fidelity (Attractor 5.4): resolution precedence, thread keys, the preamble per mode."""

from __future__ import annotations

import pytest

from orchestra_core.engine.fidelity import (
    build_preamble,
    effective_fidelity,
    history_limit,
    project_context,
    resolve_fidelity,
    resolve_thread_key,
    stage_history,
)
from orchestra_core.model.outcome import Outcome
from tests.support.engine import graph

G = graph(
    """
    digraph g {
        graph [default_fidelity="summary:low"]
        a [fidelity="truncate"]
        b
        c [thread_id="t-node", class="reviewers"]
        d [class="team"]
        a -> b [fidelity="full", thread_id="t-edge"]
        b -> c
        c -> d
    }
    """
)


def test_resolution_edge_then_node_then_graph_then_compact() -> None:
    edge = G.outgoing("a")[0]
    assert resolve_fidelity(G.nodes["b"], G, edge) == "full"
    assert resolve_fidelity(G.nodes["a"], G, None) == "truncate"
    assert resolve_fidelity(G.nodes["b"], G, G.outgoing("b")[0]) == "summary:low"
    bare = graph("digraph g { x }")
    assert resolve_fidelity(bare.nodes["x"], bare) == "compact"


def test_unknown_modes_count_as_unset() -> None:
    odd = graph('digraph g { x [fidelity="everything"] }')
    assert resolve_fidelity(odd.nodes["x"], odd) == "compact"


def test_full_degrades_once_after_resume() -> None:
    assert effective_fidelity("full", first_after_resume=True) == "summary:high"
    assert effective_fidelity("full", first_after_resume=False) == "full"
    assert effective_fidelity("compact", first_after_resume=True) == "compact"


def test_thread_keys() -> None:
    assert resolve_thread_key(G.nodes["c"], G, G.outgoing("b")[0], "b") == "t-node"
    assert resolve_thread_key(G.nodes["b"], G, G.outgoing("a")[0], "a") == "t-edge"
    assert resolve_thread_key(G.nodes["d"], G, G.outgoing("c")[0], "c") == "team"
    assert resolve_thread_key(G.nodes["b"], G, None, "a") == "a"
    assert resolve_thread_key(G.nodes["b"], G, None, None) == "b"
    with_default = graph('digraph g { graph [thread_id="shared"]; x }')
    assert resolve_thread_key(with_default.nodes["x"], with_default, None, "w") == "shared"


def history(count: int) -> tuple[list[str], dict[str, Outcome]]:
    nodes = [f"stage{i}" for i in range(count)]
    outcomes = {node: Outcome.success(f"notes of {node} " + "x" * 300) for node in nodes}
    outcomes["stage3"] = Outcome.fail("compiler error")
    return nodes, outcomes


CONTEXT = {f"context.key{i}": "v" * 500 for i in range(80)} | {"internal.secret": "hidden", "graph.goal": "g"}


def preamble(mode: str, count: int = 60) -> str:
    nodes, outcomes = history(count)
    return build_preamble(
        mode,
        goal="ship it",
        session_id="run-1",
        history=stage_history(nodes, outcomes, history_limit(mode)),
        context=CONTEXT,
        total_stages=count,
    )


def test_full_has_no_preamble() -> None:
    assert preamble("full") == ""


def test_truncate_carries_only_goal_and_run_id() -> None:
    text = preamble("truncate")
    assert "Goal: ship it" in text and "Run: run-1" in text
    assert "stage0" not in text and "key" not in text


def test_preambles_grow_with_the_mode_and_respect_their_budget() -> None:
    sizes = {mode: len(preamble(mode)) for mode in ("truncate", "summary:low", "summary:medium", "summary:high")}
    assert sizes["truncate"] < sizes["summary:low"] < sizes["summary:medium"] < sizes["summary:high"]
    assert sizes["summary:low"] <= 2400 and sizes["summary:medium"] <= 6000 and sizes["summary:high"] <= 12000


@pytest.mark.parametrize("mode", ["compact", "summary:low", "summary:medium", "summary:high"])
def test_preambles_list_recent_stages_and_hide_engine_keys(mode: str) -> None:
    text = preamble(mode, count=4)
    assert "- stage3: fail (compiler error)" in text
    assert "internal.secret" not in text and "graph.goal" not in text
    assert "context.key79" in text


def test_summaries_count_outcomes_and_notes_only_from_medium() -> None:
    assert "notes of stage0" not in preamble("summary:low", count=4)
    assert "notes of stage0" in preamble("summary:medium", count=4)
    assert "4 stages finished so far" in preamble("summary:low", count=4)
    assert "stages finished so far" not in preamble("compact", count=4)


VALUES = {"graph.goal": "g", "internal.fidelity": "truncate", "long": "X" * 1200, "count": 7, "flag": True,
           "items": [1, "two"], "none": None}


def test_truncate_projection_drops_internal_keys_and_caps_every_value_as_text() -> None:
    projected = project_context("truncate", VALUES)
    assert projected == {"graph.goal": "g", "long": "X" * 500, "count": "7", "flag": "true",
                         "items": '[1, "two"]', "none": ""}


@pytest.mark.parametrize("mode", ["full", "compact", "summary:low", "summary:high"])
def test_other_modes_project_every_value_as_it_is_without_internal_keys(mode: str) -> None:
    assert project_context(mode, VALUES) == {k: v for k, v in VALUES.items() if k != "internal.fidelity"}
