"""Lint rules about attribute values: typed attributes, goal gates, fidelity, reasoning effort, retry targets.

Every attribute the engine, a handler or a backend parses at run time is checked here, so that what `compile`
accepts `run` accepts (tests/property/test_compile_run_agreement.py holds them to it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from fractions import Fraction

from attrs import frozen

from orchestra_core.model import budget, values
from orchestra_core.model.conditions import ConditionSyntaxError, parse_condition
from orchestra_core.model.graph import FIDELITY_MODES, Graph
from orchestra_core.validation.diagnostic import Diagnostic, FunctionRule, Severity

ERROR, WARNING = Severity.ERROR, Severity.WARNING
REASONING_EFFORTS = ("low", "medium", "high")
Pair = tuple[str, str]


@frozen
class AttributeKind:
    """How a typed attribute parses, what it is called in messages, and an example for the fix."""

    parse: Callable[[str], float | Fraction]
    expected: str
    example: str
    minimum: float | None = None


_INT = AttributeKind(values.parse_int, "an integer", "2")
_COUNT = AttributeKind(values.parse_int, "a whole number of 0 or more", "2", minimum=0)
_POSITIVE = AttributeKind(values.parse_int, "a whole number of 1 or more", "4", minimum=1)
_BOOL = AttributeKind(values.parse_bool, "a boolean", "true")
_NUMBER = AttributeKind(values.parse_number, "a number (2, 2.0, 0.5)", "2")
_FACTOR = AttributeKind(values.parse_number, "a number of 0 or more", "2", minimum=0)
_DURATION = AttributeKind(
    values.parse_duration, "a positive duration (250ms, 900s, 15m, 2h, 1d)", "900s", minimum=0.001
)
_DELAY = AttributeKind(values.parse_duration, "a duration of 0 or more (0s, 250ms, 30s)", "1s", minimum=0)

_DOLLARS = AttributeKind(
    lambda text: float(budget.parse_cost(text).amount), "a positive amount of US dollars (5, 2.50)", "5"
)
_TOKENS = AttributeKind(budget.parse_tokens, "a whole number of tokens of 1 or more", "2000000")
_WALL_TIME = AttributeKind(budget.parse_wall_time, "a positive duration (90m, 2h)", "2h")

GRAPH_TYPES: Mapping[str, AttributeKind] = {
    budget.MAX_COST: _DOLLARS,
    budget.MAX_TOKENS: _TOKENS,
    budget.MAX_WALL_TIME: _WALL_TIME,
    "default_max_retries": _COUNT,
    "default_max_retry": _COUNT,
    "default_max_visits": _INT,
    "max_node_visits": _POSITIVE,
}
NODE_TYPES: Mapping[str, AttributeKind] = {
    budget.MAX_COST: _DOLLARS,
    budget.MAX_TOKENS: _TOKENS,
    "max_retries": _COUNT,
    "auto_status": _BOOL,
    "allow_partial": _BOOL,
    "timeout": _DURATION,
    "max_parallel": _POSITIVE,
    "manager.max_cycles": _POSITIVE,
    "manager.poll_interval": _DURATION,
    "stack.child_autostart": _BOOL,
    "max_visits": _INT,
    "max_cycles": _POSITIVE,
    "wait_ms": _COUNT,
    "retry_initial_delay": _DELAY,
    "retry_max_delay": _DELAY,
    "retry_backoff_factor": _FACTOR,
    "retry_jitter": _BOOL,
    "human.timeout": _DURATION,
    "manager.steer_cooldown": _DELAY,
    "agent.max_turns": _POSITIVE,
}
EDGE_TYPES: Mapping[str, AttributeKind] = {"weight": _NUMBER, "loop_restart": _BOOL}


def _bad_value(kind: AttributeKind, raw: str) -> bool:
    try:
        parsed = kind.parse(raw)
    except ValueError:
        return True
    return kind.minimum is not None and parsed < kind.minimum


def _typed_problems(
    attrs: Mapping[str, str], table: Mapping[str, AttributeKind]
) -> Iterator[tuple[str, str, AttributeKind]]:
    for key, kind in table.items():
        raw = attrs.get(key)
        if raw and _bad_value(kind, raw):
            yield key, raw, kind


def check_attribute_type(graph: Graph) -> Iterator[Diagnostic]:
    """Typed attributes (integers, booleans, durations) hold values of their type."""

    def diagnostic(
        owner: str,
        key: str,
        raw: str,
        kind: AttributeKind,
        node_id: str | None = None,
        edge: Pair | None = None,
    ) -> Diagnostic:
        message = f"{owner}: {key}={raw!r} is not {kind.expected}"
        fix = f"write it like {key}={kind.example}"
        return Diagnostic("attribute_type", ERROR, message, node_id=node_id, edge=edge, fix=fix)

    for key, raw, kind in _typed_problems(graph.attrs, GRAPH_TYPES):
        yield diagnostic("graph", key, raw, kind)
    for node in graph.nodes.values():
        for key, raw, kind in _typed_problems(node.attrs, NODE_TYPES):
            yield diagnostic(f"node {node.id}", key, raw, kind, node_id=node.id)
        gate = _goal_gate_problem(node.attrs.get("goal_gate", ""))
        if gate is not None:
            fix = 'write goal_gate=true, or a condition such as goal_gate="outcome=success && context.tests=passed"'
            yield Diagnostic("attribute_type", ERROR, gate, node_id=node.id, fix=fix)
    for edge in graph.edges:
        for key, raw, kind in _typed_problems(edge.attrs, EDGE_TYPES):
            yield diagnostic(
                f"edge {edge.source} -> {edge.target}", key, raw, kind, edge=(edge.source, edge.target)
            )


def _goal_gate_problem(raw: str) -> str | None:
    """Why a `goal_gate` value is neither a boolean nor a condition (None when it is one of them)."""
    if not raw.strip() or not _bad_value(_BOOL, raw):
        return None
    try:
        parse_condition(raw)
    except ConditionSyntaxError as error:
        return (
            f"goal_gate={raw!r} is neither a boolean nor a condition: {error.detail} at column {error.position + 1}"
        )
    return None


def check_fidelity_valid(graph: Graph) -> Iterator[Diagnostic]:
    """Fidelity modes on the graph, nodes and edges are ones the engine knows."""
    fix = f"use one of: {', '.join(FIDELITY_MODES)}"

    def diagnostic(
        owner: str, key: str, value: str, node_id: str | None = None, edge: Pair | None = None
    ) -> Diagnostic:
        message = f"{owner}: {key}={value!r} is not a fidelity mode"
        return Diagnostic("fidelity_valid", WARNING, message, node_id=node_id, edge=edge, fix=fix)

    if graph.default_fidelity and graph.default_fidelity not in FIDELITY_MODES:
        yield diagnostic("graph", "default_fidelity", graph.default_fidelity)
    for node in graph.nodes.values():
        if node.fidelity and node.fidelity not in FIDELITY_MODES:
            yield diagnostic(f"node {node.id}", "fidelity", node.fidelity, node_id=node.id)
    for edge in graph.edges:
        if edge.fidelity and edge.fidelity not in FIDELITY_MODES:
            pair = (edge.source, edge.target)
            yield diagnostic(f"edge {edge.source} -> {edge.target}", "fidelity", edge.fidelity, edge=pair)


def check_reasoning_effort_valid(graph: Graph) -> Iterator[Diagnostic]:
    """`reasoning_effort` (set on the node or by the stylesheet) is low, medium or high."""
    for node in graph.nodes.values():
        effort = node.attrs.get("reasoning_effort", "")
        if effort and effort not in REASONING_EFFORTS:
            yield Diagnostic(
                "reasoning_effort_valid",
                WARNING,
                f"node {node.id}: reasoning_effort={effort!r} is not one of {', '.join(REASONING_EFFORTS)}",
                node_id=node.id,
                fix="use low, medium or high",
            )


def check_retry_target_exists(graph: Graph) -> Iterator[Diagnostic]:
    """`retry_target` and `fallback_retry_target` name nodes of the graph."""
    keys = ("retry_target", "fallback_retry_target")
    owners: list[tuple[str, Mapping[str, str], str | None]] = [("graph", graph.attrs, None)]
    owners.extend((f"node {node.id}", node.attrs, node.id) for node in graph.nodes.values())
    for owner, attrs, node_id in owners:
        for key in keys:
            target = attrs.get(key, "")
            if target and target not in graph.nodes:
                yield Diagnostic(
                    "retry_target_exists",
                    WARNING,
                    f"{owner}: {key}={target!r} is not a node of the graph",
                    node_id=node_id,
                    fix=f"set {key} to an existing node id",
                )


def check_goal_gate_has_retry(graph: Graph) -> Iterator[Diagnostic]:
    """A goal gate has somewhere to go back to: its own retry targets or the graph's."""
    graph_target = graph.retry_target or graph.fallback_retry_target
    for node in graph.nodes.values():
        if not node.goal_gate or _goal_gate_problem(node.attrs.get("goal_gate", "")) is not None:
            continue
        if node.retry_target or node.fallback_retry_target or graph_target:
            continue
        yield Diagnostic(
            "goal_gate_has_retry",
            WARNING,
            "goal gate without a retry_target, so an unmet gate fails the whole pipeline",
            node_id=node.id,
            fix=f"add retry_target=<node to go back to> on {node.id} or on the graph",
        )


ATTRIBUTE_RULES = (
    FunctionRule("attribute_type", check_attribute_type),
    FunctionRule("fidelity_valid", check_fidelity_valid),
    FunctionRule("reasoning_effort_valid", check_reasoning_effort_valid),
    FunctionRule("retry_target_exists", check_retry_target_exists),
    FunctionRule("goal_gate_has_retry", check_goal_gate_has_retry),
)
