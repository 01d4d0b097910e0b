"""Graph transforms (Attractor 9.1-9.3): `$goal` expansion, the model stylesheet, custom transforms.

Transforms run after parsing and before validation. Each returns a new Graph; the input is never changed
(Graph is frozen). Built-ins run first, then custom transforms in registration order.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Protocol, runtime_checkable

from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.graph import Graph
from orchestra_core.stylesheet import StylesheetSyntaxError, parse_stylesheet

# `$goal` but not `$goals` or `$goal_text`: other variables are left for the prompt templates.
GOAL_VARIABLE_RE = re.compile(r"\$goal(?![A-Za-z0-9_])")


@runtime_checkable
class Transform(Protocol):
    """Rewrites a pipeline graph between parsing and validation."""

    def apply(self, graph: Graph) -> Graph:
        """Return the transformed graph.

        Args:
            graph: The graph to transform; it must not be modified (it is frozen anyway).

        Returns:
            A new graph, or `graph` itself when nothing changes.
        """
        ...


class VariableExpansionTransform:
    """Replaces `$goal` in node prompts with the graph's `goal` (9.2).

    With no goal set, prompts are left as they are so that validation can point at the unset goal
    (rule `goal_variable`) instead of the prompt silently losing the word.
    """

    def apply(self, graph: Graph) -> Graph:
        goal = graph.goal
        if not goal:
            return graph
        expanded = [
            node.with_attrs_map({"prompt": GOAL_VARIABLE_RE.sub(lambda _: goal, node.prompt)})
            for node in graph.nodes.values()
            if "$goal" in node.prompt
        ]
        return graph.replace_nodes(expanded) if expanded else graph


class StylesheetTransform:
    """Fills `llm_model`, `llm_provider` and `reasoning_effort` from the graph's `model_stylesheet` (8.5).

    Only properties a node does not set itself are filled. A stylesheet that does not parse leaves the
    graph unchanged; validation reports it (rule `stylesheet_syntax`).
    """

    def apply(self, graph: Graph) -> Graph:
        text = graph.model_stylesheet
        if not text.strip():
            return graph
        try:
            stylesheet = parse_stylesheet(text)
        except StylesheetSyntaxError:
            return graph
        if not stylesheet.rules:
            return graph
        return graph.evolve(nodes={node.id: node for node in stylesheet.apply(graph.nodes.values())})


BUILT_IN_TRANSFORMS: tuple[Transform, ...] = (VariableExpansionTransform(), StylesheetTransform())


class TransformError(OrchestraError):
    """A custom transform did not return a Graph."""


class TransformRegistry:
    """Built-in transforms followed by custom ones in registration order."""

    def __init__(self, custom: Iterable[Transform] = ()) -> None:
        self._custom: list[Transform] = list(custom)

    def register(self, transform: Transform) -> None:
        """Add a custom transform; it runs after the built-ins and the ones registered before it."""
        self._custom.append(transform)

    @property
    def transforms(self) -> tuple[Transform, ...]:
        """Every transform in the order they run."""
        return (*BUILT_IN_TRANSFORMS, *self._custom)

    def apply(self, graph: Graph) -> Graph:
        """Run every transform over the graph.

        Raises:
            TransformError: A transform returned something other than a Graph.
        """
        for transform in self.transforms:
            result = transform.apply(graph)
            if not isinstance(result, Graph):
                name = type(transform).__name__
                raise TransformError(f"transform {name} returned {type(result).__name__}, not a Graph")
            graph = result
        return graph


def apply_transforms(graph: Graph, custom: Iterable[Transform] = ()) -> Graph:
    """Run the built-in transforms, then `custom` in order, and return the resulting graph."""
    return TransformRegistry(custom).apply(graph)
