"""Edge selection (Attractor 3.3): condition, preferred label, suggested ids, weight, lexical order."""

from __future__ import annotations

from collections.abc import Sequence

from attrs import frozen

from orchestra_core.model.conditions import ContextLookup
from orchestra_core.model.graph import Edge
from orchestra_core.model.interview import normalize_label
from orchestra_core.model.outcome import Outcome


@frozen
class SelectedEdge:
    """The chosen edge and the step that chose it (`condition`, `preferred_label`,
    `suggested_next_ids` or `weight`)."""

    edge: Edge
    reason: str


def best_by_weight_then_lexical(edges: Sequence[Edge]) -> Edge:
    """Highest weight first; equal weights are broken by the target id in lexical order."""
    return min(edges, key=lambda edge: (-edge.weight, edge.target))


def select_edge(
    edges: Sequence[Edge], outcome: Outcome, context: ContextLookup, *, allow_fallthrough: bool = True
) -> SelectedEdge | None:
    """Choose the next edge among a node's outgoing edges.

    Args:
        edges: The node's outgoing edges, in declaration order.
        outcome: The node's outcome.
        context: The run context (conditions read it).
        allow_fallthrough: Whether unconditional edges may be chosen by weight (steps 4 and 5). The
            engine turns it off after a FAIL, so a failed stage never falls through to the next stage
            (failure routing, Attractor 3.7).

    Raises:
        ConditionSyntaxError: An edge's condition does not parse (validation reports this first).
    """
    if not edges:
        return None
    status = outcome.status.value
    matched = [
        edge
        for edge in edges
        if edge.condition_ast is not None
        and edge.condition_ast.evaluate(outcome=status, preferred_label=outcome.preferred_label, context=context)
    ]
    if matched:
        return SelectedEdge(best_by_weight_then_lexical(matched), "condition")
    unconditional = [edge for edge in edges if edge.condition_ast is None]
    if outcome.preferred_label:
        wanted = normalize_label(outcome.preferred_label)
        for edge in unconditional:
            if normalize_label(edge.label) == wanted:
                return SelectedEdge(edge, "preferred_label")
    for suggested in outcome.suggested_next_ids:
        for edge in unconditional:
            if edge.target == suggested:
                return SelectedEdge(edge, "suggested_next_ids")
    if unconditional and allow_fallthrough:
        return SelectedEdge(best_by_weight_then_lexical(unconditional), "weight")
    return None
