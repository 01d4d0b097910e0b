"""Context fidelity (Attractor 5.4): mode resolution, thread keys for `full`, and the prompt preamble.

Modes other than `full` start a fresh LLM session; the preamble is how earlier stages reach it, sized per
mode: `truncate` (goal and run id only), `compact` (bullet list of recent stages and key context values),
`summary:low` / `summary:medium` / `summary:high` (about 600 / 1500 / 3000 tokens).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from attrs import frozen

from orchestra_core.model.conditions import stringify
from orchestra_core.model.graph import FIDELITY_MODES, Edge, Graph, Node
from orchestra_core.model.outcome import Outcome

DEFAULT_FIDELITY = "compact"
RESUME_FIDELITY = "summary:high"
TRUNCATE_VALUE_CHARS = 500
_HIDDEN_PREFIXES = ("internal.", "graph.")
_HIDDEN_KEYS = frozenset({"outcome", "preferred_label", "current_node"})


def resolve_fidelity(node: Node, graph: Graph, incoming_edge: Edge | None = None) -> str:
    """Edge `fidelity`, else node `fidelity`, else graph `default_fidelity`, else `compact`.

    An unknown mode (validation warns about it) counts as unset.
    """
    candidates = (incoming_edge.fidelity if incoming_edge else "", node.fidelity, graph.default_fidelity)
    return next((mode for mode in candidates if mode in FIDELITY_MODES), DEFAULT_FIDELITY)


def effective_fidelity(mode: str, *, first_after_resume: bool) -> str:
    """`full` degrades to `summary:high` for the first node after a resume (sessions are not saved)."""
    return RESUME_FIDELITY if first_after_resume and mode == "full" else mode


def resolve_thread_key(
    node: Node, graph: Graph, incoming_edge: Edge | None = None, previous_node: str | None = None
) -> str:
    """The LLM session key for `full` fidelity: node `thread_id`, edge `thread_id`, graph `thread_id`,
    the node's first class (subgraphs give their nodes a class), the previous node id, the node id."""
    candidates = (
        node.thread_id,
        incoming_edge.thread_id if incoming_edge else "",
        graph.get("thread_id"),
        node.classes[0] if node.classes else "",
        previous_node or "",
    )
    return next((key for key in candidates if key), node.id)


def project_context(mode: str, context: Mapping[str, Any]) -> dict[str, Any]:
    """The context a stage sees under a fidelity mode (its `context.json`): without the engine's `internal.*`
    keys; under `truncate` every value as its text, cut to 500 characters; under other modes values as they
    are."""
    visible = {key: value for key, value in context.items() if not key.startswith("internal.")}
    if mode == "truncate":
        return {key: stringify(value)[:TRUNCATE_VALUE_CHARS] for key, value in visible.items()}
    return visible


@frozen
class _Budget:
    stages: int
    context_keys: int
    value_chars: int
    total_chars: int
    with_notes: bool
    with_counts: bool


_BUDGETS: Mapping[str, _Budget] = {
    "truncate": _Budget(0, 0, 0, 600, with_notes=False, with_counts=False),
    "compact": _Budget(12, 12, 120, 4000, with_notes=False, with_counts=False),
    "summary:low": _Budget(5, 6, 80, 2400, with_notes=False, with_counts=True),
    "summary:medium": _Budget(15, 20, 200, 6000, with_notes=True, with_counts=True),
    "summary:high": _Budget(40, 50, 400, 12000, with_notes=True, with_counts=True),
}


Stage = tuple[str, Outcome]


def stage_history(completed_nodes: Sequence[str], node_outcomes: Mapping[str, Outcome], limit: int) -> list[Stage]:
    """The latest `limit` finished stages, oldest first, with their latest outcomes."""
    recent = completed_nodes[-limit:] if limit > 0 else []
    return [(node_id, node_outcomes[node_id]) for node_id in recent if node_id in node_outcomes]


def history_limit(mode: str) -> int:
    """How many stages the preamble of a mode shows (0 for `full`)."""
    budget = _BUDGETS.get(mode)
    return budget.stages if budget else 0


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "…"


def _stage_line(stage: Stage, budget: _Budget) -> str:
    node_id, outcome = stage
    line = f"- {node_id}: {outcome.status.value}"
    detail = outcome.failure_reason or (outcome.notes if budget.with_notes else "")
    return f"{line} ({_clip(detail, budget.value_chars)})" if detail else line


def _context_lines(context: Mapping[str, Any], budget: _Budget) -> list[str]:
    visible = [
        key for key in context if key not in _HIDDEN_KEYS and not key.startswith(_HIDDEN_PREFIXES)
    ]
    chosen = visible[-budget.context_keys :] if budget.context_keys else []
    return [f"- {key}: {_clip(stringify(context[key]), budget.value_chars)}" for key in chosen]


def build_preamble(
    mode: str,
    *,
    goal: str,
    session_id: str,
    history: Sequence[Stage],
    context: Mapping[str, Any],
    total_stages: int,
) -> str:
    """The text put before a stage's prompt under a non-`full` fidelity mode ("" for `full`).

    Args:
        mode: The resolved fidelity mode.
        goal: The pipeline goal.
        session_id: The run's session id.
        history: Recent finished stages, oldest first (see `stage_history`).
        context: The context values.
        total_stages: How many stages have finished in all.
    """
    budget = _BUDGETS.get(mode)
    if budget is None:
        return ""
    header = ["## Context from earlier stages"]
    if goal:
        header.append(f"Goal: {goal}")
    header.append(f"Run: {session_id}")
    if budget.with_counts and total_stages:
        statuses = [outcome.status.value for _, outcome in history]
        counts = ", ".join(f"{statuses.count(s)} {s}" for s in dict.fromkeys(statuses))
        header.append(f"{total_stages} stages finished so far (latest {len(history)}: {counts}).")
    shown = list(history)[-budget.stages :] if budget.stages else []
    stages = [_stage_line(stage, budget) for stage in shown]
    values = _context_lines(context, budget)
    return _fit(header, stages, values, budget.total_chars)


def _fit(header: list[str], stages: list[str], values: list[str], limit: int) -> str:
    """Join the sections, dropping the oldest context values, then the oldest stages, to fit `limit`."""

    def render() -> str:
        lines = list(header)
        if stages:
            lines += ["Recent stages, oldest first:", *stages]
        if values:
            lines += ["Key context values:", *values]
        return "\n".join(lines)

    text = render()
    while len(text) > limit and (values or stages):
        (values if values else stages).pop(0)
        text = render()
    return _clip_block(text, limit)


def _clip_block(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
