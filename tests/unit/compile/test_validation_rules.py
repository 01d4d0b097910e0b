"""Attractor 11.2 and 7.2: every built-in lint rule, the 11.12 validation rows, and validate_or_raise."""

from __future__ import annotations

import pytest

from orchestra_core.graph import Edge, Graph, Node, parse_dot
from orchestra_core.validation import (
    Diagnostic,
    FunctionRule,
    LintRule,
    Severity,
    ValidationError,
    validate,
    validate_or_raise,
)


def lint(body: str, **options: object) -> list[Diagnostic]:
    return validate(parse_dot(f"digraph G {{\n{body}\n}}"), **options)  # type: ignore[arg-type]


def by_rule(diagnostics: list[Diagnostic], rule: str) -> list[Diagnostic]:
    return [d for d in diagnostics if d.rule == rule]


VALID = """
    start [shape=Mdiamond]
    work [prompt="do the work"]
    exit [shape=Msquare]
    start -> work -> exit
"""


def test_a_valid_pipeline_has_no_diagnostics() -> None:
    assert lint(VALID) == []


# --- start_node / terminal_node (11.2 items 1-2, 11.12 rows) ---------------------------------------


def test_11_12_missing_start_node_is_an_error() -> None:
    found = by_rule(lint('work [prompt="x"]\nexit [shape=Msquare]\nwork -> exit'), "start_node")
    assert [(d.severity, d.node_id) for d in found] == [(Severity.ERROR, None)]
    assert "no start node" in found[0].message and found[0].fix


def test_11_12_missing_exit_node_is_an_error() -> None:
    found = by_rule(lint('start [shape=Mdiamond]\nwork [prompt="x"]\nstart -> work'), "terminal_node")
    assert [d.severity for d in found] == [Severity.ERROR]
    assert "no exit node" in found[0].message


def test_11_2_exactly_one_start_node_is_required() -> None:
    found = by_rule(lint(VALID + "other [shape=Mdiamond]\nother -> work"), "start_node")
    assert len(found) == 1 and "2 start nodes (start, other)" in found[0].message


def test_11_2_exactly_one_exit_node_is_required() -> None:
    found = by_rule(lint(VALID + "done [shape=Msquare]\nwork -> done"), "terminal_node")
    assert len(found) == 1 and "2 exit nodes (exit, done)" in found[0].message


@pytest.mark.parametrize("start_id", ["start", "Start"])
@pytest.mark.parametrize("exit_id", ["exit", "Exit", "end", "End"])
def test_start_and_exit_found_by_id_when_no_shape_marks_them(start_id: str, exit_id: str) -> None:
    diagnostics = lint(f'{start_id}\nwork [prompt="x"]\n{exit_id}\n{start_id} -> work -> {exit_id}')
    assert not by_rule(diagnostics, "start_node") and not by_rule(diagnostics, "terminal_node")


def test_shape_wins_over_id_for_start_and_exit() -> None:
    # `start` is an ordinary stage here: the Mdiamond node is the start, so `start` must be reachable.
    diagnostics = lint(
        'begin [shape=Mdiamond]\nstart [prompt="x"]\nexit [shape=Msquare]\nbegin -> start -> exit'
    )
    assert diagnostics == []


# --- start_no_incoming / exit_no_outgoing ----------------------------------------------------------


def test_11_2_start_node_has_no_incoming_edges() -> None:
    found = by_rule(lint(VALID + "work -> start"), "start_no_incoming")
    assert [(d.severity, d.node_id, d.edge) for d in found] == [(Severity.ERROR, "start", ("work", "start"))]


def test_11_2_exit_node_has_no_outgoing_edges() -> None:
    found = by_rule(lint(VALID + "exit -> work"), "exit_no_outgoing")
    assert [(d.severity, d.node_id, d.edge) for d in found] == [(Severity.ERROR, "exit", ("exit", "work"))]


# --- reachability and orphans ------------------------------------------------------------------------


def test_11_2_all_nodes_reachable_from_start() -> None:
    found = by_rule(lint(VALID + 'island [prompt="x"]\nshore [prompt="y"]\nisland -> shore'), "reachability")
    assert [(d.severity, d.node_id) for d in found] == [(Severity.ERROR, "island"), (Severity.ERROR, "shore")]
    assert "is unreachable (orphan): no path from the start node start leads to it" in found[0].message


def test_a_node_without_edges_is_an_unreachable_orphan_error() -> None:
    diagnostics = lint(VALID + 'lonely [prompt="x"]')
    assert [(d.rule, d.severity, d.node_id) for d in diagnostics] == [("orphan_node", Severity.ERROR, "lonely")]
    assert "unreachable (orphan)" in diagnostics[0].message


def test_unreachable_exit_is_an_error_even_without_edges() -> None:
    diagnostics = lint('start [shape=Mdiamond]\nwork [prompt="x"]\nexit [shape=Msquare]\nstart -> work')
    assert [(d.rule, d.node_id) for d in diagnostics] == [("reachability", "exit"), ("dead_end", "work")]


def test_reachability_follows_cycles_and_is_linear_on_long_chains() -> None:
    chain = "\n".join(f"n{i} -> n{i + 1}" for i in range(3000))
    diagnostics = lint(
        f"start [shape=Mdiamond]\nexit [shape=Msquare]\nnode [prompt=p]\nstart -> n0\n{chain}\nn3000 -> n0\nn3000 -> exit"
    )
    assert [(d.rule, d.node_id) for d in diagnostics] == [("loop_bound", "n0")]  # an unbounded loop of LLM stages


# --- edge_target_exists ------------------------------------------------------------------------------


def test_11_2_all_edges_reference_valid_node_ids() -> None:
    graph = Graph(
        "G",
        nodes={"start": Node("start", {"shape": "Mdiamond"}), "exit": Node("exit", {"shape": "Msquare"})},
        edges=[Edge("start", "exit"), Edge("start", "ghost"), Edge("phantom", "exit")],
    )
    found = by_rule(validate(graph), "edge_target_exists")
    assert [(d.severity, d.edge) for d in found] == [
        (Severity.ERROR, ("start", "ghost")),
        (Severity.ERROR, ("phantom", "exit")),
    ]
    assert "target ghost is not a node" in found[0].message
    assert "source phantom is not a node" in found[1].message


# --- prompt_on_llm_nodes -----------------------------------------------------------------------------


def test_11_2_codergen_node_without_prompt_is_a_warning() -> None:
    found = by_rule(lint(VALID.replace('work [prompt="do the work"]', "work")), "prompt_on_llm_nodes")
    assert [(d.severity, d.node_id) for d in found] == [(Severity.WARNING, "work")]


@pytest.mark.parametrize(
    "attrs", ['label="Work"', 'agent="coder"', 'agent.role="reviewer"', 'agent.persona="p"', 'agent.task="t"']
)
def test_label_or_agent_configuration_counts_as_a_prompt(attrs: str) -> None:
    assert not by_rule(
        lint(VALID.replace('work [prompt="do the work"]', f"work [{attrs}]")), "prompt_on_llm_nodes"
    )


def test_prompt_rule_ignores_non_llm_nodes() -> None:
    body = VALID + "gate [shape=diamond]\nwork -> gate -> exit"
    assert not by_rule(lint(body), "prompt_on_llm_nodes")


# --- condition_syntax --------------------------------------------------------------------------------


def test_11_2_condition_expressions_parse_without_errors() -> None:
    found = by_rule(lint(VALID + 'work -> exit [condition="outcome=success && "]'), "condition_syntax")
    assert [(d.severity, d.edge) for d in found] == [(Severity.ERROR, ("work", "exit"))]
    assert found[0].location == "edge work -> exit"
    assert found[0].message.startswith("condition 'outcome=success && ' does not parse")
    assert "expected a key after '&&' at column 20" in found[0].message


def test_condition_syntax_names_the_column_of_the_problem() -> None:
    found = by_rule(lint(VALID + 'work -> exit [condition="outcome==success"]'), "condition_syntax")
    assert "'==' is not an operator; use '=' at column 8" in found[0].message


def test_manager_stop_condition_is_checked_too() -> None:
    found = by_rule(
        lint(VALID + 'boss [shape=house, manager.stop_condition="a = = b"]\nwork -> boss -> exit'),
        "condition_syntax",
    )
    assert [(d.node_id, d.edge) for d in found] == [("boss", None)]


# --- stylesheet_syntax -------------------------------------------------------------------------------


def test_stylesheet_syntax_error_names_line_and_column() -> None:
    found = by_rule(
        lint(VALID + 'model_stylesheet="* { llm_model: a; }\\n.x { modl: b; }"'), "stylesheet_syntax"
    )
    assert [d.severity for d in found] == [Severity.ERROR]
    assert found[0].message.startswith("model_stylesheet line 2, column 6: unknown property 'modl'")


def test_model_spec_alias_is_validated() -> None:
    found = by_rule(lint(VALID + 'model_spec="* { llm_model a }"'), "stylesheet_syntax")
    assert len(found) == 1


# --- type_known / shape_known ------------------------------------------------------------------------


def test_unknown_type_is_a_warning_with_a_suggestion() -> None:
    found = by_rule(lint(VALID + 'ask [type="wait.humna", label="Ask"]\nwork -> ask -> exit'), "type_known")
    assert [(d.severity, d.node_id) for d in found] == [(Severity.WARNING, "ask")]
    assert found[0].fix == "did you mean 'wait.human'?"


def test_known_types_come_from_the_handler_registry() -> None:
    body = VALID + 'custom [type="deploy", label="Deploy"]\nwork -> custom -> exit'
    assert by_rule(lint(body), "type_known")
    known = {"start", "exit", "codergen", "deploy"}
    assert not by_rule(lint(body, known_types=known), "type_known")


def test_shape_whose_handler_is_not_registered_is_reported() -> None:
    body = VALID + 'boss [shape=house, label="Boss"]\nwork -> boss -> exit'
    found = by_rule(lint(body, known_types={"start", "exit", "codergen"}), "type_known")
    assert "handler 'stack.manager_loop' (from shape=house)" in found[0].message


def test_unmapped_shape_warns_that_the_node_is_an_llm_stage() -> None:
    found = by_rule(lint(VALID + 'ask [shape=hexagone, label="Ask"]\nwork -> ask -> exit'), "shape_known")
    assert [d.node_id for d in found] == ["ask"]
    assert "did you mean 'hexagon'?" in (found[0].fix or "")
    assert not by_rule(lint(VALID + "x [shape=ellipse, type=tool]\nwork -> x -> exit"), "shape_known")


# --- fidelity_valid / retry_target_exists / goal_gate_has_retry / reasoning_effort -----------------


def test_fidelity_modes_are_checked_on_graph_nodes_and_edges() -> None:
    body = (
        VALID
        + 'default_fidelity="low"\nwork [fidelity="summary:medium"]\nwork -> exit [fidelity="everything"]'
    )
    found = by_rule(lint(body), "fidelity_valid")
    assert [(d.severity, d.node_id, d.edge) for d in found] == [
        (Severity.WARNING, None, None),
        (Severity.WARNING, None, ("work", "exit")),
    ]


def test_retry_targets_must_exist() -> None:
    body = VALID + 'retry_target="nowhere"\nwork [retry_target=start, fallback_retry_target="gone"]'
    found = by_rule(lint(body), "retry_target_exists")
    assert [(d.severity, d.node_id) for d in found] == [(Severity.WARNING, None), (Severity.WARNING, "work")]
    assert "fallback_retry_target='gone'" in found[1].message


def test_goal_gate_without_retry_target_is_a_warning() -> None:
    found = by_rule(lint(VALID + "work [goal_gate=true]"), "goal_gate_has_retry")
    assert [(d.severity, d.node_id) for d in found] == [(Severity.WARNING, "work")]


@pytest.mark.parametrize(
    "where", ["work [retry_target=start]", "work [fallback_retry_target=start]", "retry_target=start"]
)
def test_goal_gate_with_a_node_or_graph_retry_target_passes(where: str) -> None:
    assert not by_rule(lint(VALID + f"work [goal_gate=true]\n{where}"), "goal_gate_has_retry")


def test_reasoning_effort_outside_low_medium_high_is_a_warning() -> None:
    found = by_rule(lint(VALID + "work [reasoning_effort=extreme]"), "reasoning_effort_valid")
    assert [(d.severity, d.node_id) for d in found] == [(Severity.WARNING, "work")]


def test_prompt_using_goal_without_a_graph_goal_is_a_warning() -> None:
    found = by_rule(lint(VALID.replace("do the work", "work on $goal")), "goal_variable")
    assert [(d.severity, d.node_id) for d in found] == [(Severity.WARNING, "work")]
    assert not by_rule(lint(VALID.replace("do the work", "work on $goal") + 'goal="x"'), "goal_variable")


# --- attribute_type ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("attribute", "expected"),
    [
        ("max_retries=abc", "is not a whole number of 0 or more"),
        ("max_retries=-1", "is not a whole number of 0 or more"),
        ("max_retries=2.5", "is not a whole number of 0 or more"),
        ("timeout=soon", "is not a positive duration"),
        ("timeout=0s", "is not a positive duration"),
        ('goal_gate="outcome==success"', "is neither a boolean nor a condition: '==' is not an operator"),
        ("auto_status=sure", "is not a boolean"),
        ("allow_partial=2", "is not a boolean"),
        ("max_parallel=0", "is not a whole number of 1 or more"),
        ('manager.poll_interval="every so often"', "is not a positive duration"),
        ("manager.max_cycles=many", "is not a whole number of 1 or more"),
        ("max_cost_usd=-1", "is not a positive amount of US dollars"),
        ("max_cost_usd=abc", "is not a positive amount of US dollars"),
        ("max_tokens=0", "is not a whole number of tokens of 1 or more"),
    ],
)
def test_malformed_node_attribute_is_an_attribute_type_error(attribute: str, expected: str) -> None:
    found = by_rule(lint(VALID + f"work [{attribute}]"), "attribute_type")
    assert [(d.severity, d.node_id) for d in found] == [(Severity.ERROR, "work")]
    assert expected in found[0].message and found[0].fix


@pytest.mark.parametrize("attribute", ["weight=x", "weight=1e3", "weight=nan", "loop_restart=perhaps"])
def test_malformed_edge_attribute_is_an_attribute_type_error(attribute: str) -> None:
    found = by_rule(lint(VALID + f"work -> exit [{attribute}]"), "attribute_type")
    assert [(d.severity, d.edge) for d in found] == [(Severity.ERROR, ("work", "exit"))]


@pytest.mark.parametrize(
    "attribute",
    ["default_max_retries=lots", "default_max_retry=-3", "max_cost_usd=-1", "max_tokens=many", "max_wall_time=forever"],
)
def test_malformed_graph_attribute_is_an_attribute_type_error(attribute: str) -> None:
    found = by_rule(lint(VALID + attribute), "attribute_type")
    assert [(d.severity, d.node_id, d.edge) for d in found] == [(Severity.ERROR, None, None)]


def test_well_formed_typed_attributes_pass() -> None:
    body = VALID + (
        "default_max_retries=2\nwork [max_retries=0, timeout=250ms, goal_gate=false, auto_status=yes, "
        "retry_target=work, max_parallel=4, max_visits=3, max_cost_usd=2.50, max_tokens=100000]\n"
        'work -> exit [weight=-2, loop_restart=false]\nmax_cost_usd=5\nmax_tokens="2000000"\nmax_wall_time=2h'
    )
    assert lint(body) == []


# --- the API: validate, validate_or_raise, custom rules -----------------------------------------------


def test_11_2_validate_or_raise_throws_on_error_severity() -> None:
    graph = parse_dot('digraph G { work [prompt="x"] }')
    with pytest.raises(ValidationError) as caught:
        validate_or_raise(graph)
    rules = {d.rule for d in caught.value.errors}
    assert rules == {"start_node", "terminal_node", "orphan_node"}
    assert "pipeline is not valid (3 errors)" in str(caught.value)
    assert caught.value.diagnostics == tuple(validate(graph))


def test_validate_or_raise_returns_warnings_when_there_is_no_error() -> None:
    diagnostics = validate_or_raise(parse_dot(f"digraph G {{ {VALID} work [promt=x] }}"))
    assert [d.rule for d in diagnostics] == ["attribute_known"]


def test_11_2_lint_results_carry_rule_severity_location_and_message() -> None:
    diagnostic = by_rule(lint(VALID + "work -> start"), "start_no_incoming")[0]
    assert diagnostic.rule == "start_no_incoming"
    assert diagnostic.severity == "error" and diagnostic.severity.value == "error"
    assert (diagnostic.node_id, diagnostic.edge) == ("start", ("work", "start"))
    assert diagnostic.message and diagnostic.fix
    assert diagnostic.location == "edge work -> start"


def test_custom_rules_run_after_the_built_in_ones() -> None:
    def no_shouting(graph: Graph) -> list[Diagnostic]:
        return [
            Diagnostic("no_shouting", "info", f"{n.id} shouts", node_id=n.id)
            for n in graph.nodes.values()
            if n.prompt.isupper()
        ]

    rule = FunctionRule("no_shouting", no_shouting)
    assert isinstance(rule, LintRule)
    diagnostics = lint(VALID.replace("do the work", "DO IT") + "lonely [prompt=x]", extra_rules=[rule])
    assert [(d.rule, d.severity) for d in diagnostics] == [
        ("orphan_node", Severity.ERROR),
        ("no_shouting", Severity.INFO),
    ]


def test_severity_values_are_lower_case_and_strings_convert() -> None:
    assert [s.value for s in Severity] == ["error", "warning", "info"]
    assert Diagnostic("r", "warning", "m").severity is Severity.WARNING
    with pytest.raises(ValueError):
        Diagnostic("r", "fatal", "m")
