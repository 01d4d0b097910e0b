"""The flow rules (dead_end, reaches_exit) against the engine's parallel semantics, the synopsis, and the
attribute names other Attractor runners use."""

from __future__ import annotations

import pytest

from orchestra_core.graph import parse_dot
from orchestra_core.validation import Diagnostic, validate
from orchestra_core.validation.flow import analyse_flow
from orchestra_core.validation.names import EDGE_KEYS, GRAPH_KEYS, NODE_KEYS
from orchestra_core.validation.synopsis import pipeline_synopsis


def lint(body: str) -> list[Diagnostic]:
    return validate(parse_dot(f"digraph G {{\n start [shape=Mdiamond]\n exit [shape=Msquare]\n{body}\n}}"))


def errors(body: str) -> list[tuple[str, str | None]]:
    return [(d.rule, d.node_id) for d in lint(body) if d.severity == "error"]


FAN_OUT = """
 node [prompt=p]
 fan [shape=component]
 join [shape=tripleoctagon]
 start -> fan
 fan -> a
 fan -> b
 a -> join
 b -> b2
 b2 -> join
 join -> exit
"""


def test_a_fan_out_whose_branches_meet_at_a_fan_in_is_valid() -> None:
    assert errors(FAN_OUT) == []


def test_a_branch_may_end_in_a_dead_end_but_not_the_main_line() -> None:
    explicit = FAN_OUT.replace("fan [shape=component]", "fan [shape=component, fan_in=join]")
    assert errors(explicit.replace("b2 -> join", "b2 -> b3")) == []  # b's branch ends at b3
    assert errors(FAN_OUT.replace("join -> exit", "join -> tail")) == [
        ("reachability", "exit"),
        ("dead_end", "tail"),
    ]


def test_a_fan_out_whose_branches_never_join_is_a_dead_end_of_the_main_line() -> None:
    found = [d for d in lint(FAN_OUT.replace("b2 -> join", "b2 -> b3")) if d.severity == "error"]
    assert [(d.rule, d.node_id) for d in found] == [("dead_end", "fan")]
    assert "never meet" in found[0].message and "fan_in=<node>" in (found[0].fix or "")


def test_a_nested_fan_out_inside_a_branch_may_end_its_inner_branches() -> None:
    nested = FAN_OUT.replace("fan [shape=component]", "fan [shape=component, fan_in=join]")
    nested = nested.replace(
        "b -> b2", "b -> inner\n inner [shape=component, fan_in=b2]\n inner -> x\n inner -> y"
    )
    assert errors(nested) == []  # x and y end the inner branches, inner goes on at b2


def test_the_main_line_goes_from_a_fan_out_to_its_join_not_into_its_branches() -> None:
    graph = parse_dot(f"digraph G {{ start [shape=Mdiamond]\n exit [shape=Msquare]\n{FAN_OUT} }}")
    flow = analyse_flow(graph, "start")
    assert flow.main_line == {"start", "fan", "join", "exit"}
    assert flow.dead_ends == frozenset()


def test_an_explicit_fan_in_makes_its_node_reachable_without_an_edge() -> None:
    body = FAN_OUT.replace("fan [shape=component]", "fan [shape=component, fan_in=join]")
    assert errors(body.replace("a -> join", "").replace("b2 -> join", "")) == []


def test_a_retry_target_is_a_way_out_of_a_cycle() -> None:
    loop = " node [prompt=p]\n start -> a\n a -> b\n b -> a\n"
    assert errors(loop) == [("reachability", "exit"), ("reaches_exit", "a"), ("reaches_exit", "b")]
    assert errors(loop + " b [retry_target=exit]") == []


def test_a_conditional_edge_of_a_fan_out_is_a_way_out() -> None:
    body = ' node [prompt=p]\n fan [shape=component]\n start -> fan\n fan -> a\n fan -> b\n fan -> exit [condition="outcome=fail"]\n'
    assert errors(body) == [("dead_end", "fan")]  # a success stops after the fan-out, not at the exit
    assert errors(body + " a -> exit\n b -> exit") == []  # the branches join at the exit


def test_only_the_cycle_is_reported_not_what_leads_into_it() -> None:
    body = " node [prompt=p]\n start -> lead\n lead -> ping\n ping -> pong\n pong -> ping\n start -> exit\n"
    assert errors(body) == [("reaches_exit", "ping"), ("reaches_exit", "pong")]


def test_flow_rules_are_silent_without_a_start_or_an_exit() -> None:
    graph = parse_dot("digraph G { a [prompt=p]; b [prompt=p]; a -> b }")
    assert {d.rule for d in validate(graph)} == {"start_node", "terminal_node"}


def test_the_flow_rules_are_linear_on_long_chains() -> None:
    chain = "\n".join(f" n{i} -> n{i + 1}" for i in range(3000))
    assert errors(f" node [prompt=p]\n start -> n0\n{chain}\n n3000 -> n0\n n3000 -> exit") == []


@pytest.mark.parametrize(
    ("body", "kind"),
    [
        ("a [prompt=p]\n start -> a -> exit", "PLANNING"),
        ('t [shape=parallelogram, tool_command="true"]\n start -> t -> exit', "EXECUTION"),
        ('a [prompt=p]\n t [shape=parallelogram, tool_command="true"]\n start -> a -> t -> exit', "HYBRID"),
        ("start -> exit", "CONTROL"),
    ],
)
def test_the_synopsis_classifies_by_llm_and_tool_stages(body: str, kind: str) -> None:
    graph = parse_dot(f"digraph G {{ start [shape=Mdiamond]\n exit [shape=Msquare]\n{body} }}")
    assert pipeline_synopsis(graph).kind == kind


def test_the_synopsis_line_counts_in_words_and_names_manager_loops_only_when_present() -> None:
    graph = parse_dot(f"digraph G {{ start [shape=Mdiamond]\n exit [shape=Msquare]\n{FAN_OUT} }}")
    assert pipeline_synopsis(graph).line() == (
        "PLANNING pipeline: 3 LLM stages, 0 tool stages, 0 human gates, 1 parallel fan-out, 7 nodes, 7 edges"
    )
    managed = parse_dot(
        "digraph G { start [shape=Mdiamond]; m [shape=house]; exit [shape=Msquare]; start -> m -> exit }"
    )
    assert pipeline_synopsis(managed).line().endswith("0 parallel fan-outs, 1 manager loop, 3 nodes, 2 edges")


# Appendix A of the Attractor spec, and the names other runners honour (issue 15).
SPEC_GRAPH = {"goal", "label", "model_stylesheet", "default_max_retries", "default_max_retry", "default_fidelity",
              "retry_target", "fallback_retry_target", "stack.child_dotfile", "stack.child_workdir",
              "tool_hooks.pre", "tool_hooks.post"}  # fmt: skip
SPEC_NODE = {"label", "shape", "type", "prompt", "max_retries", "goal_gate", "retry_target", "fallback_retry_target",
             "fidelity", "thread_id", "class", "timeout", "llm_model", "llm_provider", "reasoning_effort",
             "auto_status", "allow_partial", "max_visits", "tool_hooks.pre", "tool_hooks.post", "max_cycles",
             "stop_condition_key", "wait_ms", "stack.child_autostart"}  # fmt: skip
SPEC_EDGE = {"label", "condition", "weight", "fidelity", "thread_id", "loop_restart"}


def test_every_attribute_of_the_spec_and_other_runners_is_known() -> None:
    assert SPEC_GRAPH <= GRAPH_KEYS and SPEC_NODE <= NODE_KEYS and SPEC_EDGE <= EDGE_KEYS


def test_unknown_graph_attributes_are_warned_with_did_you_mean_and_graphviz_ones_are_not() -> None:
    graph = parse_dot('digraph G { graph [gaol="x", rankdir=LR, splines=ortho] start [shape=Mdiamond]; '
                      'exit [shape=Msquare]; start -> exit }')  # fmt: skip
    found = [d for d in validate(graph) if d.rule == "attribute_known"]
    assert [(d.location, d.severity.value) for d in found] == [("graph", "warning")]
    assert found[0].message.endswith("did you mean 'goal'?")


def test_stylesheet_set_attributes_are_known() -> None:
    graph = parse_dot(
        'digraph G { graph [model_stylesheet="* { llm_model: m; llm_provider: openai; reasoning_effort: low; }"] '
        "start [shape=Mdiamond]; a [prompt=p]; exit [shape=Msquare]; start -> a -> exit }"
    )
    assert validate(graph) == []


def test_a_graph_attribute_the_pipeline_reads_from_the_context_is_not_warned() -> None:
    graph = parse_dot(
        'digraph G { graph [env=prod, region=eu] start [shape=Mdiamond]; a [prompt="Deploy to $graph.region"]; '
        'exit [shape=Msquare]; start -> a; a -> exit [condition="context.graph.env=prod"]; '
        'a -> exit [condition="outcome=fail"] }'
    )
    assert validate(graph) == []
    unread = parse_dot(
        "digraph G { graph [envv=prod] start [shape=Mdiamond]; exit [shape=Msquare]; start -> exit }"
    )
    assert [d.message for d in validate(unread)] == [
        "unknown attribute 'envv' is only read as graph.envv from the run context"
    ]
