"""Lint rules about meaning: conditions, the stylesheet, handler types, prompts and `$goal`."""

from __future__ import annotations

import difflib
from collections.abc import Collection, Iterator

from orchestra_core.model.conditions import ConditionSyntaxError, parse_condition
from orchestra_core.model.graph import SHAPE_TO_HANDLER, Graph
from orchestra_core.stylesheet import PROPERTIES, StylesheetSyntaxError, parse_stylesheet
from orchestra_core.transforms import GOAL_VARIABLE_RE
from orchestra_core.validation.diagnostic import Diagnostic, FunctionRule, Severity

ERROR, WARNING = Severity.ERROR, Severity.WARNING
BUILT_IN_HANDLER_TYPES = frozenset(SHAPE_TO_HANDLER.values())
AGENT_KEYS = ("agent", "agent.role", "agent.persona", "agent.task")
CONDITION_FIX = (
    "a condition is clauses joined by &&, each `key=value`, `key!=value` or a bare key; "
    "keys are outcome, preferred_label or context.<name>, e.g. outcome=success && context.tests=passed"
)


def _condition_message(owner: str, error: ConditionSyntaxError) -> str:
    return f"{owner}: condition {error.condition!r} does not parse: {error.detail} at column {error.position + 1}"


def check_condition_syntax(graph: Graph) -> Iterator[Diagnostic]:
    """Edge conditions (and manager stop conditions) parse."""
    for edge in graph.edges:
        error = edge.condition_error
        if error is not None:
            owner = f"edge {edge.source} -> {edge.target}"
            pair = (edge.source, edge.target)
            yield Diagnostic(
                "condition_syntax", ERROR, _condition_message(owner, error), edge=pair, fix=CONDITION_FIX
            )
    for node in graph.nodes.values():
        text = node.attrs.get("manager.stop_condition", "")
        if not text.strip():
            continue
        try:
            parse_condition(text)
        except ConditionSyntaxError as error:
            message = _condition_message(f"node {node.id} manager.stop_condition", error)
            yield Diagnostic("condition_syntax", ERROR, message, node_id=node.id, fix=CONDITION_FIX)


def check_stylesheet_syntax(graph: Graph) -> Iterator[Diagnostic]:
    """The graph's `model_stylesheet` parses."""
    try:
        parse_stylesheet(graph.model_stylesheet)
    except StylesheetSyntaxError as error:
        yield Diagnostic(
            "stylesheet_syntax",
            ERROR,
            str(error),
            fix=(
                "write rules like `.code { llm_model: claude-opus-4-6; reasoning_effort: high; }`; selectors are "
                f"*, a shape, .class or #node_id; properties are {', '.join(PROPERTIES)}"
            ),
        )


class TypeKnownRule:
    """Every node's handler type (explicit `type`, else from its shape) is one a handler is registered for."""

    name = "type_known"

    def __init__(self, known_types: Collection[str] | None = None) -> None:
        self.known_types = frozenset(BUILT_IN_HANDLER_TYPES if known_types is None else known_types)

    def apply(self, graph: Graph) -> list[Diagnostic]:
        found = []
        for node in graph.nodes.values():
            handler = node.handler_type
            if handler in self.known_types:
                continue
            source = f"type={handler!r}" if node.type else f"handler {handler!r} (from shape={node.shape})"
            found.append(
                Diagnostic(
                    self.name,
                    WARNING,
                    f"node {node.id}: {source} has no registered handler",
                    node_id=node.id,
                    fix=_suggest(handler, self.known_types),
                )
            )
        return found


def _suggest(value: str, choices: Collection[str]) -> str:
    close = difflib.get_close_matches(value, sorted(choices), n=1)
    if close:
        return f"did you mean {close[0]!r}?"
    return f"use one of: {', '.join(sorted(choices))}, or register a handler for it"


def check_shape_known(graph: Graph) -> Iterator[Diagnostic]:
    """A shape with no handler mapping quietly makes an LLM stage; say so unless `type` is explicit."""
    for node in graph.nodes.values():
        shape = node.attrs.get("shape", "")
        if shape and not node.type and shape not in SHAPE_TO_HANDLER:
            yield Diagnostic(
                "shape_known",
                WARNING,
                f"node {node.id}: shape={shape!r} maps to no handler, so the node runs as an LLM stage (codergen)",
                node_id=node.id,
                fix=_suggest(shape, SHAPE_TO_HANDLER) + " (or set type explicitly)",
            )


def check_prompt_on_llm_nodes(graph: Graph) -> Iterator[Diagnostic]:
    """LLM stages say what to do: a prompt, a label or agent configuration."""
    for node in graph.nodes.values():
        if node.handler_type != "codergen" or node.prompt or "label" in node.attrs:
            continue
        if any(node.attrs.get(key) for key in AGENT_KEYS):
            continue
        yield Diagnostic(
            "prompt_on_llm_nodes",
            WARNING,
            "LLM stage without a prompt, label or agent, so its id is the whole instruction",
            node_id=node.id,
            fix=f'add prompt="..." to {node.id}, or agent=<name> from orchestra.yaml',
        )


def check_goal_variable(graph: Graph) -> Iterator[Diagnostic]:
    """A prompt that uses `$goal` needs the graph's `goal` (left unexpanded when it is unset)."""
    if graph.goal:
        return
    for node in graph.nodes.values():
        if GOAL_VARIABLE_RE.search(node.prompt):
            yield Diagnostic(
                "goal_variable",
                WARNING,
                f"node {node.id}: the prompt uses $goal but the graph sets no goal",
                node_id=node.id,
                fix='add goal="..." to the graph attributes',
            )


SEMANTIC_RULES = (
    FunctionRule("condition_syntax", check_condition_syntax),
    FunctionRule("stylesheet_syntax", check_stylesheet_syntax),
    FunctionRule("shape_known", check_shape_known),
    FunctionRule("prompt_on_llm_nodes", check_prompt_on_llm_nodes),
    FunctionRule("goal_variable", check_goal_variable),
)
