"""Whatever `compile` accepts, `run` accepts: generated attribute values (Orchestra's, other runners' dialects,
malformed ones) on a pipeline of every handler kind whose stages all succeed. When validation finds no error,
the simulated run succeeds, so nothing the run refuses was let through by validation."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from orchestra_core.graph import parse_dot
from orchestra_core.interview.interviewers import AutoApproveInterviewer
from orchestra_core.model.checkpoint import RunStatus
from orchestra_core.pipeline import prepare_pipeline
from orchestra_core.testing.command_runner import ScriptedCommandRunner
from tests.support.engine import Harness

# For each attribute: values Orchestra or another runner accepts, then values it must refuse.
COUNTS = (["0", "1", "2", "3", "-1"], ["1.5", "x"])
DURATIONS = (["900s", "15m", "0s", "250ms"], ["-5s", "soon"])
BOOLEANS = (["true", "false", "yes", "off", "1"], ["maybe"])
PRESETS = (["none", "standard", "aggressive", "linear", "patient"], ["fast"])
# Gates that a successful stage meets, and a condition that does not parse.
GATES = (["true", "false", "1", "outcome=success", "outcome!=fail && preferred_label!=x"], ["outcome=success ||"])
Values = tuple[list[str], list[str]]

NODE_VALUES: dict[str, Values] = {
    "max_retries": COUNTS,
    "max_visits": COUNTS,
    "retry_policy": PRESETS,
    "retry_preset": PRESETS,
    "retry_initial_delay": DURATIONS,
    "retry_max_delay": DURATIONS,
    "retry_backoff_factor": (["2", "1.5", "0"], ["nan"]),
    "retry_jitter": BOOLEANS,
    "timeout": (["900s", "15m"], ["0s", "soon"]),
    "goal_gate": GATES,
    "auto_status": BOOLEANS,
    "allow_partial": BOOLEANS,
    "fidelity": (["full", "compact", "summary:high", "bogus"], []),
    "reasoning_effort": (["low", "high", "extreme"], []),
    "thread_id": (["t1", ""], []),
}
PARALLEL_VALUES: dict[str, Values] = {
    "join_policy": (["wait_all", "first_success", "k_of_n", "quorum", "all_success", "any_success", ""], ["most"]),
    "k": COUNTS,
    "quorum_ratio": (["0.5", "1", "0.34"], ["0", "1.5"]),
    "quorum_count": COUNTS,
    "max_parallel": COUNTS,
}
GATE_VALUES: dict[str, Values] = {
    "human.timeout": DURATIONS,
    "human.default_choice": (["A", "approve", "done_b", ""], ["nope"]),
}
TOOL_VALUES: dict[str, Values] = {"tool_command": (["true"], ["", "  "]), "auto_status": BOOLEANS}
EDGE_VALUES: dict[str, Values] = {
    "weight": (["0", "2", "-1", "2.0", "0.5"], ["x", "1e3", "nan"]),
    "loop_restart": (["true", "false"], ["maybe"]),
}
GRAPH_VALUES: dict[str, Values] = {
    "default_max_retries": COUNTS,
    "default_max_visits": COUNTS,
    "default_retry_policy": PRESETS,
    "max_node_visits": (["1000"], ["0", "-3", "x"]),
    "default_fidelity": (["truncate", "bogus"], []),
    "model_stylesheet": (["* { llm_model: a; }", "* { model: a; }", ".x { provider = b }", ""], ["* { modle: a }", "* {"]),
}

SHAPE = """digraph agreement {{
    graph [goal="agree"{graph}]
    start  [shape=Mdiamond]
    exit   [shape=Msquare]
    work   [prompt="work"{work}]
    fan    [shape=component{fan}]
    b1     [prompt="b1"{b1}]
    b2     [prompt="b2"]
    join   [shape=tripleoctagon]
    tool   [shape=parallelogram{tool}]
    gate   [shape=hexagon, label="Ship?"{gate}]
    done_a [prompt="a"]
    done_b [prompt="b"]
    start -> work -> fan
    fan -> b1
    b1 -> join [{branch_edge}]
    fan -> b2 -> join
    join -> tool -> gate
    gate -> done_a [label="[A] Approve"{edge_a}]
    gate -> done_b [label="[R] Revise"{edge_b}]
    done_a -> exit
    done_b -> exit
}}
"""


def attributes(table: dict[str, Values]) -> st.SearchStrategy[str]:
    """Some of the table's keys, each with one of its values (an accepted one four times out of five), as
    `, key="value"` text."""

    def value(key: str) -> st.SearchStrategy[str]:
        accepted, refused = table[key]
        return st.sampled_from(accepted * 4 + refused)

    pairs = st.dictionaries(st.sampled_from(sorted(table)), st.just(""), max_size=3).flatmap(
        lambda keys: st.fixed_dictionaries({key: value(key) for key in keys})
    )
    return pairs.map(lambda chosen: "".join(f', {key}="{value}"' for key, value in chosen.items()))


@st.composite
def pipelines(draw: st.DrawFn) -> str:
    return SHAPE.format(
        graph=draw(attributes(GRAPH_VALUES)),
        work=draw(attributes(NODE_VALUES)),
        fan=draw(attributes({**PARALLEL_VALUES, **NODE_VALUES})),
        b1=draw(attributes(NODE_VALUES)),
        tool=draw(attributes({**TOOL_VALUES, **NODE_VALUES})) or ', tool_command="true"',
        gate=draw(attributes({**GATE_VALUES, **NODE_VALUES})),
        branch_edge=draw(attributes(EDGE_VALUES)).lstrip(", "),
        edge_a=draw(attributes(EDGE_VALUES)),
        edge_b=draw(attributes(EDGE_VALUES)),
    )


@st.composite
def fan_outs(draw: st.DrawFn) -> str:
    """The same pipeline with attributes only where the fan-out reads them: more of its combinations."""
    return SHAPE.format(
        graph="", work="", b1="", tool=', tool_command="true"', gate="", edge_a="", edge_b="",
        fan=draw(attributes(PARALLEL_VALUES)),
        branch_edge=draw(attributes(EDGE_VALUES)).lstrip(", "),
    )  # fmt: skip


def runs_if_valid(text: str) -> None:
    prepared = prepare_pipeline(parse_dot(text))
    if not prepared.valid:
        return
    harness = Harness(interviewer=AutoApproveInterviewer(), command_runner=ScriptedCommandRunner())
    result = harness.run(prepared.graph)
    assert result.status is RunStatus.SUCCESS, f"{result.failure_reason}\n{text}"


@settings(max_examples=300, deadline=None)
@given(pipelines())
def test_a_pipeline_compile_accepts_runs_without_a_refusal(text: str) -> None:
    runs_if_valid(text)


@settings(max_examples=200, deadline=None)
@given(fan_outs())
def test_a_fan_out_compile_accepts_runs_without_a_refusal(text: str) -> None:
    runs_if_valid(text)
