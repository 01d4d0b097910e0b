"""Token and time totals per node, kept by a backend for `orchestra status`."""

from __future__ import annotations

import threading

from attrs import evolve, field, frozen

from orchestra_core.model.turn import TokenUsage


@frozen
class NodeUsage:
    """What a node's executions cost: model calls, agent turns, tokens and wall time."""

    model_calls: int = 0
    turns: int = 0
    tokens: TokenUsage = field(factory=TokenUsage)
    duration_s: float = 0.0

    def __add__(self, other: NodeUsage) -> NodeUsage:
        return NodeUsage(
            self.model_calls + other.model_calls,
            self.turns + other.turns,
            self.tokens + other.tokens,
            self.duration_s + other.duration_s,
        )

    def with_call(self, tokens: TokenUsage) -> NodeUsage:
        """This usage plus one model call that used `tokens`."""
        return evolve(self, model_calls=self.model_calls + 1, tokens=self.tokens + tokens)


class UsageLedger:
    """Per-node totals over every execution of the node in this run (thread-safe)."""

    def __init__(self) -> None:
        self._totals: dict[str, NodeUsage] = {}
        self._lock = threading.Lock()

    def add(self, node_id: str, usage: NodeUsage) -> None:
        with self._lock:
            self._totals[node_id] = self._totals.get(node_id, NodeUsage()) + usage

    def for_node(self, node_id: str) -> NodeUsage:
        """The node's totals so far (zeros when it has not run)."""
        with self._lock:
            return self._totals.get(node_id, NodeUsage())

    def totals(self) -> dict[str, NodeUsage]:
        """Every node's totals, in first-run order."""
        with self._lock:
            return dict(self._totals)
