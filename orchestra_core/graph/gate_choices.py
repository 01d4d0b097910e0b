"""A human gate's choices (Attractor 4.6): one per outgoing edge, with accelerator keys; what a reply names.

The wait.human handler asks them; validation checks that `human.default_choice` names one.
"""

from __future__ import annotations

from collections.abc import Sequence

from attrs import frozen

from orchestra_core.model.graph import Graph, Node
from orchestra_core.model.interview import Option, accelerator_key, match_option

__all__ = ["Choice", "find_choice", "gate_choices", "is_freeform"]


@frozen
class Choice:
    """One way out of a human gate."""

    key: str
    label: str
    target: str

    @property
    def option(self) -> Option:
        return Option(self.key, self.label)


def gate_choices(node: Node, graph: Graph) -> list[Choice]:
    """The gate's choices, one per outgoing edge, with unique accelerator keys.

    A key already taken falls back to the next unused letter or digit of the label, then to a number.
    """
    choices: list[Choice] = []
    taken: set[str] = set()
    for position, edge in enumerate(graph.outgoing(node.id), start=1):
        label = edge.label or edge.target
        key = accelerator_key(label)
        if not key or key in taken:
            spare = (c.upper() for c in label if c.isalnum() and c.upper() not in taken)
            key = next(spare, str(position))
        taken.add(key)
        choices.append(Choice(key, label, edge.target))
    return choices


def is_freeform(node: Node, graph: Graph) -> bool:
    """A freeform gate: its one outgoing edge has no label, so there is nothing to choose; the answer is text."""
    edges = graph.outgoing(node.id)
    return len(edges) == 1 and not edges[0].label


def find_choice(choices: Sequence[Choice], reply: str) -> Choice | None:
    """The choice a reply names: key, label or target node id."""
    option = match_option([c.option for c in choices], reply, {c.key: c.target for c in choices})
    return next((c for c in choices if option is not None and c.key == option.key), None)
