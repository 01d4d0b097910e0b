"""Other runners' dialects: read as Orchestra's spelling with an `attribute_dialect` warning that names it, or
refused at compile time (`attribute_value`, `attribute_type`) when Orchestra cannot honour them."""

from __future__ import annotations

from fractions import Fraction

import pytest

from orchestra_core.graph import parse_dot
from orchestra_core.graph.join_policy import JoinPolicy, join_policy
from orchestra_core.pipeline import prepare_pipeline
from orchestra_core.stylesheet import parse_stylesheet
from orchestra_core.validation import Diagnostic, Severity

WARNING, ERROR = Severity.WARNING, Severity.ERROR


def lint(body: str, graph_attrs: str = "") -> list[Diagnostic]:
    text = f'digraph G {{\n graph [goal="g"{", " + graph_attrs if graph_attrs else ""}]\n{body}\n}}'
    return list(prepare_pipeline(parse_dot(text)).diagnostics)


def of(diagnostics: list[Diagnostic], rule: str) -> list[Diagnostic]:
    return [d for d in diagnostics if d.rule == rule]


LINE = """
    start [shape=Mdiamond]
    work [prompt="do the work"]
    exit [shape=Msquare]
    start -> work -> exit
"""


def fan(policy: str, branches: int = 3) -> str:
    """A fan-out of `branches` LLM stages joined at a fan-in; `policy` is the parallel node's attributes."""
    names = [f"b{i}" for i in range(branches)]
    edges = "\n".join(f"fan -> {n} -> join" for n in names)
    return f"""
    start [shape=Mdiamond]; exit [shape=Msquare]
    fan [shape=component, {policy}]
    join [shape=tripleoctagon]
    {"; ".join(f'{n} [prompt="review {n}"]' for n in names)}
    start -> fan
    {edges}
    join -> exit
    """


# --- the stylesheet: `model:`, `provider:`, `=` -----------------------------------------------------


def test_a_stylesheet_model_property_is_read_as_llm_model_with_a_warning_naming_it() -> None:
    text = f'digraph G {{ graph [model_stylesheet="* {{ model: claude-x; }}\\n.r {{ provider = openai; }}"]\n{LINE}\n'
    text += 'work [class="r"] }'
    prepared = prepare_pipeline(parse_dot(text))
    assert prepared.graph.nodes["work"].attrs["llm_model"] == "claude-x"
    assert prepared.graph.nodes["work"].attrs["llm_provider"] == "openai"
    found = of(list(prepared.diagnostics), "attribute_dialect")
    assert [(d.severity, d.node_id, d.edge) for d in found] == [(WARNING, None, None)] * 2
    assert found[0].message == (
        "model_stylesheet line 1, column 5: `model:` is another runner's spelling of `llm_model:`, read as llm_model"
    )
    assert found[1].message.startswith("model_stylesheet line 2, column 6: `provider =` is another runner's spelling")
    assert found[0].fix == "write `llm_model: <value>;`"
    assert prepared.valid


def test_the_stylesheet_spelled_as_the_spec_has_no_dialect() -> None:
    stylesheet = parse_stylesheet("* { llm_model: a; llm_provider: b; reasoning_effort: low }")
    assert stylesheet.dialects() == []
    assert parse_stylesheet("* { model: a }") == parse_stylesheet("* { llm_model: a }")


# --- decimal weights --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("weight", "reading"),
    [("2.0", "the same as weight=2"), ("0.5", "it ranks above 0 and below 1"), ("-1.5", "above -2 and below -1")],
)
def test_a_decimal_weight_is_read_as_the_exact_number_with_a_warning(weight: str, reading: str) -> None:
    found = lint(LINE + f"work -> exit [weight={weight}]")
    assert [(d.rule, d.severity, d.edge) for d in found] == [("attribute_dialect", WARNING, ("work", "exit"))]
    assert found[0].message.startswith(f"weight={weight} is a decimal, where the spec's weight is an integer")
    assert reading in found[0].message


def test_weights_are_exact_numbers() -> None:
    edges = parse_dot("digraph G { a -> b [weight=2.0]; a -> c [weight=0.1]; a -> d [weight=-3] }").edges
    assert [e.weight for e in edges] == [2, Fraction(1, 10), -3]


# --- join policies ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("attrs", "policy", "needed"),
    [
        ("join_policy=wait_all", JoinPolicy("wait_all"), None),
        ("join_policy=k_of_n, k=2", JoinPolicy("k_of_n", k=2), 2),
        ("join_policy=quorum, quorum_ratio=0.5", JoinPolicy("quorum", ratio=Fraction(1, 2)), 2),
        ("join_policy=quorum, quorum_ratio=1", JoinPolicy("quorum", ratio=Fraction(1)), 3),
        ("join_policy=all_success", JoinPolicy("quorum", ratio=Fraction(1)), 3),
        ("join_policy=any_success", JoinPolicy("k_of_n", k=1), 1),
        ("join_policy=quorum, quorum_count=2", JoinPolicy("k_of_n", k=2), 2),
    ],
)
def test_join_policies_read_as_orchestra_s(attrs: str, policy: JoinPolicy, needed: int | None) -> None:
    node = parse_dot(f"digraph G {{ fan [shape=component, {attrs}] }}").nodes["fan"]
    read = join_policy(node)
    assert (read.name, read.k, read.ratio) == (policy.name, policy.k, policy.ratio)
    assert read.needed(3) == needed


@pytest.mark.parametrize(
    ("written", "message"),
    [
        ("all_success", "join_policy=all_success is read as join_policy=quorum, quorum_ratio=1 (every branch must"),
        ("any_success", "join_policy=any_success is read as join_policy=k_of_n, k=1 (at least one branch must"),
        ("quorum, quorum_count=2", "join_policy=quorum with quorum_count=2 is read as join_policy=k_of_n, k=2"),
    ],
)
def test_other_runners_join_policies_warn_with_orchestra_s_spelling(written: str, message: str) -> None:
    found = lint(fan(f"join_policy={written}"))
    assert [(d.rule, d.severity, d.node_id) for d in found] == [("attribute_dialect", WARNING, "fan")]
    assert found[0].message.startswith(message) and found[0].fix.startswith("write join_policy=")


def test_orchestra_s_join_policies_are_quiet() -> None:
    for attrs in ("join_policy=wait_all", "join_policy=first_success", "join_policy=k_of_n, k=3",
                  "join_policy=quorum, quorum_ratio=0.66"):  # fmt: skip
        assert lint(fan(attrs)) == [], attrs


@pytest.mark.parametrize(
    ("attrs", "message"),
    [
        ("join_policy=sometimes", "join_policy='sometimes' is not a join policy Orchestra knows (wait_all, first_succ"),
        ("join_policy=quorum", "join_policy=quorum needs quorum_ratio, the fraction of the branches that must"),
        ("join_policy=k_of_n", "join_policy=k_of_n needs k, the branches that must succeed"),
        ("join_policy=k_of_n, k=0", "k='0' is not a whole number of 1 or more"),
        ("join_policy=k_of_n, k=4", "join_policy=k_of_n, k=4 can never be met: it needs 4 successful branches and"),
        ("join_policy=quorum, quorum_ratio=1.5", "quorum_ratio='1.5' is not a fraction of the branches above 0"),
        ("join_policy=quorum, quorum_ratio=0", "quorum_ratio='0' is not a fraction"),
        ("join_policy=quorum, quorum_count=many", "quorum_count='many' is not a whole number"),
    ],
)
def test_join_policies_orchestra_cannot_honour_are_compile_errors(attrs: str, message: str) -> None:
    found = of(lint(fan(attrs)), "attribute_value")
    assert [(d.severity, d.node_id) for d in found] == [(ERROR, "fan")]
    assert found[0].message.startswith(message) and found[0].fix


def test_a_join_policy_on_a_node_that_does_not_fan_out_is_not_read() -> None:
    assert of(lint(LINE + "work [join_policy=sometimes]"), "attribute_value") == []


# --- goal_gate as a condition -----------------------------------------------------------------------


def test_a_goal_gate_condition_is_a_gate_read_with_a_warning() -> None:
    found = lint(LINE + 'work [goal_gate="outcome=success && context.tests_passed=true", retry_target=work, max_visits=3]')
    assert [(d.rule, d.severity, d.node_id) for d in found] == [("attribute_dialect", WARNING, "work")]
    assert "is a condition, where the spec's goal_gate is true or false" in found[0].message
    node = parse_dot('digraph G { work [goal_gate="context.ready"] }').nodes["work"]
    assert node.goal_gate and node.goal_gate_condition is not None


def test_a_goal_gate_that_is_neither_boolean_nor_condition_is_an_error_naming_the_node() -> None:
    found = of(lint(LINE + 'work [goal_gate="outcome=success || x"]'), "attribute_type")
    assert [(d.severity, d.node_id) for d in found] == [(ERROR, "work")]
    assert found[0].message.startswith("goal_gate='outcome=success || x' is neither a boolean nor a condition:")


def test_a_condition_gate_without_a_retry_target_is_warned_like_a_boolean_one() -> None:
    assert [d.node_id for d in of(lint(LINE + 'work [goal_gate="context.ok"]'), "goal_gate_has_retry")] == ["work"]


# --- retry presets ----------------------------------------------------------------------------------


def test_retry_preset_is_read_as_retry_policy_with_a_warning() -> None:
    found = lint(LINE + "work [retry_preset=aggressive]")
    assert [(d.rule, d.severity, d.node_id) for d in found] == [("attribute_dialect", WARNING, "work")]
    assert found[0].message == (
        "retry_preset=aggressive is another runner's name for retry_policy; read as retry_policy=aggressive "
        "(the spec's preset: 5 attempts, 0.5s first delay, factor 2)"
    )


def test_retry_policy_wins_over_retry_preset_and_says_so() -> None:
    found = lint(LINE + "work [retry_policy=linear, retry_preset=patient]")
    assert [d.message for d in found] == [
        "retry_preset='patient' is another runner's name for retry_policy, which the node also sets and which wins"
    ]


@pytest.mark.parametrize(
    ("body", "graph_attrs", "node_id"),
    [
        (LINE + "work [retry_preset=sometimes]", "", "work"),
        (LINE + "work [retry_policy=fast]", "", "work"),
        (LINE, "default_retry_policy=eager", None),
    ],
)
def test_unknown_retry_presets_are_compile_errors(body: str, graph_attrs: str, node_id: str | None) -> None:
    found = of(lint(body, graph_attrs), "attribute_value")
    assert [(d.severity, d.node_id) for d in found] == [(ERROR, node_id)]
    assert "is not a retry preset (none, standard, aggressive, linear, patient)" in found[0].message


def test_retry_settings_are_known_attributes() -> None:
    body = LINE + "work [retry_policy=patient, retry_initial_delay=0s, retry_backoff_factor=1.5, retry_jitter=false]"
    assert lint(body, "default_retry_policy=standard") == []


# --- what a handler would refuse at run time --------------------------------------------------------


@pytest.mark.parametrize(
    ("attribute", "message"),
    [
        ("retry_initial_delay=soon", "is not a duration of 0 or more"),
        ("retry_backoff_factor=nan", "is not a number of 0 or more"),
        ("retry_jitter=maybe", "is not a boolean"),
        ("human.timeout=-5s", "is not a positive duration"),
        ("manager.steer_cooldown=often", "is not a duration of 0 or more"),
        ("agent.max_turns=0", "is not a whole number of 1 or more"),
    ],
)
def test_settings_parsed_at_run_time_are_checked_at_compile_time(attribute: str, message: str) -> None:
    found = of(lint(LINE + f"work [{attribute}]"), "attribute_type")
    assert [(d.severity, d.node_id) for d in found] == [(ERROR, "work")] and message in found[0].message


@pytest.mark.parametrize("attribute", ["max_node_visits=0", "default_max_visits=few"])
def test_run_wide_and_default_visit_bounds_are_typed(attribute: str) -> None:
    assert [d.severity for d in of(lint(LINE, attribute), "attribute_type")] == [ERROR]


def test_a_tool_node_without_a_command_is_a_compile_error() -> None:
    found = of(lint(LINE + "check [shape=parallelogram]\nwork -> check -> exit"), "attribute_value")
    assert [(d.severity, d.node_id) for d in found] == [(ERROR, "check")]


def test_a_default_choice_that_names_no_choice_is_a_compile_error() -> None:
    gate = LINE + 'ask [shape=hexagon, human.default_choice="{}"]\nwork -> ask\nask -> exit [label="[S] Ship"]\n'
    gate += 'ask -> work [label="[F] Fix"]'
    assert of(lint(gate.format("S")), "attribute_value") == []
    assert of(lint(gate.format("work")), "attribute_value") == []
    found = of(lint(gate.format("Maybe")), "attribute_value")
    assert [(d.severity, d.node_id) for d in found] == [(ERROR, "ask")]
    assert found[0].message == "human.default_choice='Maybe' names none of the gate's choices ([S] Ship, [F] Fix)"


def test_a_manager_loop_with_nothing_to_watch_is_a_compile_error() -> None:
    body = LINE + "boss [shape=house]\nwork -> boss -> exit"
    assert [d.node_id for d in of(lint(body), "attribute_value")] == ["boss"]
    watching = LINE + 'boss [shape=house, manager.stop_condition="context.done=yes", max_visits=1]\nwork -> boss -> exit'
    assert of(lint(watching), "attribute_value") == []


def test_a_loop_restart_a_parallel_branch_may_take_is_a_compile_error() -> None:
    body = fan("join_policy=all_success").replace("fan -> b0 -> join", "fan -> b0\nb0 -> join [loop_restart=true]")
    found = of(lint(body), "attribute_value")
    assert [(d.severity, d.edge) for d in found] == [(ERROR, ("b0", "join"))]
    assert found[0].message.startswith("loop_restart=true on an edge from b0, which runs inside a parallel branch")
    after_the_join = fan("join_policy=wait_all").replace("join -> exit", "join -> exit\njoin -> start2 [loop_restart=true]")
    assert of(lint(after_the_join + "\nstart2 -> fan"), "attribute_value") == []
