"""`loop_bound`: a warning for each loop through an LLM stage that no visit bound of the pipeline limits."""

from __future__ import annotations

import pytest

from orchestra_core.graph import parse_dot
from orchestra_core.validation import Diagnostic, Severity, validate


def loops(body: str, graph_attrs: str = "") -> list[Diagnostic]:
    text = f"digraph G {{\n graph [{graph_attrs}]\n start [shape=Mdiamond]; exit [shape=Msquare]\n{body}\n}}"
    return [d for d in validate(parse_dot(text)) if d.rule == "loop_bound"]


STARTER = """
    implement [prompt="write hello.py"{bound}]
    check [shape=parallelogram, tool_command="python3 hello.py"]
    start -> implement -> check
    check -> exit [condition="outcome=success"]
    check -> implement [condition="outcome=fail"]
"""


def test_an_unbounded_loop_through_an_llm_stage_is_warned_with_the_default_and_how_to_bound_it() -> None:
    [found] = loops(STARTER.format(bound=""))
    assert (found.severity, found.node_id) == (Severity.WARNING, "implement")
    assert found.message == (
        "the loop implement -> check -> implement runs an LLM stage and no node of it sets a visit bound: unless "
        "its way out opens, it goes round until one of its nodes has run 20 times (the default bound), then the "
        "run fails"
    )
    assert found.fix == (
        "set max_visits=N on a node of the loop (e.g. max_visits=5 on implement), or default_max_visits=N on the "
        "graph; 0 lifts the bound"
    )


@pytest.mark.parametrize(
    ("bound", "graph_attrs"),
    [(", max_visits=5", ""), (", max_visits=0", ""), ("", "default_max_visits=8"), ("", "default_max_visits=0")],
)
def test_a_bound_on_a_node_of_the_loop_or_on_the_graph_silences_it(bound: str, graph_attrs: str) -> None:
    assert loops(STARTER.format(bound=bound), graph_attrs) == []


def test_a_bound_on_the_tool_stage_of_the_loop_silences_it_too() -> None:
    assert loops(STARTER.format(bound="").replace('tool_command="python3 hello.py"', 'tool_command="t", max_visits=4')) == []


def test_loops_without_an_llm_stage_are_left_alone() -> None:
    body = """
        poll [shape=parallelogram, tool_command="check"]
        start -> poll
        poll -> exit [condition="outcome=success"]
        poll -> poll [condition="outcome=fail"]
    """
    assert loops(body) == []


def test_a_loop_through_a_goal_gate_s_retry_target_counts() -> None:
    body = """
        plan [prompt="plan"]
        work [prompt="work", goal_gate=true]
        start -> plan -> work -> exit
    """
    assert loops(body) == []
    [found] = loops(body, "retry_target=plan")
    assert found.node_id == "plan" and "the loop plan -> work -> exit -> plan" in found.message


def test_a_bound_that_breaks_one_loop_leaves_the_other_warned() -> None:
    body = """
        a [prompt="a"]; b [prompt="b"]; c [prompt="c", max_visits=3]
        start -> a
        a -> b [condition="outcome=fail"]
        a -> c [condition="outcome=partial_success"]
        a -> exit [condition="outcome=success"]
        b -> a; c -> a
    """
    [found] = loops(body)
    assert "the loop a -> b -> a " in found.message


def test_several_loops_through_the_same_nodes_are_one_warning_naming_them() -> None:
    body = """
        a [prompt="a"]; b [prompt="b"]; c [prompt="c"]
        start -> a
        a -> b [condition="outcome=fail"]
        a -> exit [condition="outcome=success"]
        b -> a [condition="outcome=fail"]
        b -> c [condition="outcome=success"]
        c -> b
    """
    [found] = loops(body)
    assert found.message.startswith("the loop through a, b and c (such as a -> b -> a) runs an LLM stage")


def test_loop_restart_edges_and_parallel_branches_are_ways_round() -> None:
    body = """
        fan [shape=component]; join [shape=tripleoctagon]
        r1 [prompt="r1"]; r2 [prompt="r2"]; judge [shape=diamond]
        start -> fan
        fan -> r1 -> join
        fan -> r2 -> join
        join -> judge
        judge -> exit [condition="outcome=success"]
        judge -> fan [condition="outcome=fail", loop_restart=true]
    """
    [found] = loops(body)
    assert found.node_id == "r1" and "(such as r1 -> join -> judge -> fan -> r1)" in found.message
