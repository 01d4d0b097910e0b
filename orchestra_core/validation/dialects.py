"""Lint rule `attribute_dialect`: other Attractor runners' spellings that Orchestra reads, and how it reads them.

A pipeline written for another runner runs here unchanged; each place where it says something in a way the
spec (or Orchestra, where the spec is silent) spells differently gets a warning that names the spelling
Orchestra reads it as: stylesheet `model:` / `provider:` / `=`, decimal edge weights, `join_policy` spellings
(`all_success`, `any_success`, `quorum` with `quorum_count`), `goal_gate` given as a condition, and
`retry_preset`.
"""

from __future__ import annotations

from collections.abc import Iterator

from orchestra_core.graph import retry_presets
from orchestra_core.graph.join_policy import JoinPolicyError, join_policy
from orchestra_core.model import values
from orchestra_core.model.graph import Graph
from orchestra_core.stylesheet import StylesheetSyntaxError, parse_stylesheet
from orchestra_core.validation.diagnostic import Diagnostic, FunctionRule, Severity

RULE = "attribute_dialect"
WARNING = Severity.WARNING


def check_attribute_dialect(graph: Graph) -> Iterator[Diagnostic]:
    """Every other runner's spelling in the pipeline, with the spelling Orchestra reads it as."""
    yield from _stylesheet(graph)
    yield from _weights(graph)
    for node in graph.nodes.values():
        yield from _node(graph, node.id)


def _stylesheet(graph: Graph) -> Iterator[Diagnostic]:
    try:
        stylesheet = parse_stylesheet(graph.model_stylesheet)
    except StylesheetSyntaxError:
        return  # stylesheet_syntax reports it
    for found in stylesheet.dialects():
        yield Diagnostic(
            RULE,
            WARNING,
            f"model_stylesheet line {found.line}, column {found.column}: `{found.written}` is another runner's "
            f"spelling of `{found.property}:`, read as {found.property}",
            fix=f"write `{found.property}: <value>;`",
        )


def _weights(graph: Graph) -> Iterator[Diagnostic]:
    for edge in graph.edges:
        raw = edge.attrs.get("weight", "").strip()
        if not raw or _is_integer(raw) or not _is_number(raw):
            continue
        weight = values.parse_number(raw)
        if weight.denominator == 1:
            reading = f"the same as weight={weight.numerator}"
        else:
            below, above = weight.numerator // weight.denominator, weight.numerator // weight.denominator + 1
            reading = f"compared as the exact number it is (it ranks above {below} and below {above})"
        yield Diagnostic(
            RULE,
            WARNING,
            f"weight={raw} is a decimal, where the spec's weight is an integer; Orchestra reads it as {reading}",
            edge=(edge.source, edge.target),
            fix=f"write weight={round(weight)}" if weight.denominator == 1 else "write an integer weight",
        )


def _is_integer(raw: str) -> bool:
    try:
        values.parse_int(raw)
    except ValueError:
        return False
    return True


def _is_number(raw: str) -> bool:
    try:
        values.parse_number(raw)
    except ValueError:
        return False  # attribute_type reports it
    return True


def _node(graph: Graph, node_id: str) -> Iterator[Diagnostic]:
    node = graph.nodes[node_id]
    if node.handler_type == "parallel":
        try:
            policy = join_policy(node)
        except JoinPolicyError:
            policy = None  # attribute_value reports it
        if policy is not None and policy.dialect is not None:
            message = f"{policy.dialect}, as another runner means it"
            yield Diagnostic(RULE, WARNING, message, node_id=node_id, fix=f"write {policy.spelled()}")
    gate = node.attrs.get("goal_gate", "").strip()
    if gate and node.goal_gate and not _is_boolean(gate):
        yield Diagnostic(
            RULE,
            WARNING,
            f"goal_gate={gate!r} is a condition, where the spec's goal_gate is true or false; Orchestra reads it "
            "as a gate that is met when the condition holds at the exit (its outcome is this node's latest)",
            node_id=node_id,
            fix="keep it, or write goal_gate=true (met by success or partial success)",
        )
    preset = node.attrs.get(retry_presets.NODE_DIALECT_KEY, "").strip()
    if preset:
        yield _retry_preset(node_id, preset, bool(node.attrs.get(retry_presets.NODE_KEY, "").strip()))


def _is_boolean(raw: str) -> bool:
    try:
        values.parse_bool(raw)
    except ValueError:
        return False
    return True


def _retry_preset(node_id: str, name: str, overridden: bool) -> Diagnostic:
    key, ours = retry_presets.NODE_DIALECT_KEY, retry_presets.NODE_KEY
    if overridden:
        message = f"{key}={name!r} is another runner's name for {ours}, which the node also sets and which wins"
        return Diagnostic(RULE, WARNING, message, node_id=node_id, fix=f"remove {key}")
    preset = retry_presets.PRESETS.get(name)
    meaning = f" (the spec's preset: {preset.describe()})" if preset is not None else ""
    message = f"{key}={name} is another runner's name for {ours}; read as {ours}={name}{meaning}"
    return Diagnostic(RULE, WARNING, message, node_id=node_id, fix=f"write {ours}={name}")


DIALECT_RULES = (FunctionRule(RULE, check_attribute_dialect),)
