"""The retry presets of Attractor 3.6 and the attributes that name them, in Orchestra's spelling or another runner's.

A node names one with `retry_policy` (other runners: `retry_preset`), a graph for every node with
`default_retry_policy`. The presets mean what the spec's table says, whatever runner wrote the name.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from attrs import frozen

from orchestra_core.model.errors import AttributeValueError
from orchestra_core.model.graph import Graph, Node

NODE_KEY = "retry_policy"
NODE_DIALECT_KEY = "retry_preset"
GRAPH_KEY = "default_retry_policy"


@frozen
class RetryPreset:
    """A preset's attempts (the first one included) and backoff: `initial_delay_s * factor ** (n - 1)`."""

    max_attempts: int
    initial_delay_s: float = 0.2
    factor: float = 2.0

    def describe(self) -> str:
        if self.max_attempts == 1:
            return "1 attempt, no retries"
        return f"{self.max_attempts} attempts, {self.initial_delay_s:g}s first delay, factor {self.factor:g}"


PRESETS: Mapping[str, RetryPreset] = MappingProxyType(
    {
        "none": RetryPreset(1),
        "standard": RetryPreset(5, 0.2, 2.0),
        "aggressive": RetryPreset(5, 0.5, 2.0),
        "linear": RetryPreset(3, 0.5, 1.0),
        "patient": RetryPreset(3, 2.0, 3.0),
    }
)


EXPECTED = f"a retry preset ({', '.join(PRESETS)})"


def node_preset_key(node: Node) -> str | None:
    """The attribute that names the node's preset: `retry_policy`, else another runner's `retry_preset`."""
    for key in (NODE_KEY, NODE_DIALECT_KEY):
        if node.attrs.get(key, "").strip():
            return key
    return None


def node_preset(node: Node) -> RetryPreset | None:
    """The preset the node names, if any.

    Raises:
        AttributeValueError: The name is not one of PRESETS (validation reports it first).
    """
    key = node_preset_key(node)
    return None if key is None else _named(node.attrs[key].strip(), f"node {node.id}", key)


def graph_preset(graph: Graph) -> RetryPreset | None:
    """The preset the graph names for every node, if any.

    Raises:
        AttributeValueError: The name is not one of PRESETS (validation reports it first).
    """
    name = graph.attrs.get(GRAPH_KEY, "").strip()
    return _named(name, "graph", GRAPH_KEY) if name else None


def _named(name: str, owner: str, key: str) -> RetryPreset:
    preset = PRESETS.get(name)
    if preset is None:
        raise AttributeValueError(owner, key, name, EXPECTED)
    return preset
