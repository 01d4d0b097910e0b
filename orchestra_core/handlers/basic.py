"""The no-op handlers: start, exit (goal gates are the engine's job) and conditional (routing is too)."""

from __future__ import annotations

from orchestra_core.engine.stage import StageRun
from orchestra_core.model.context import Context
from orchestra_core.model.graph import Graph, Node
from orchestra_core.model.outcome import Outcome


class StartHandler:
    """Attractor 4.3: SUCCESS at once."""

    def execute(self, node: Node, context: Context, graph: Graph, stage: StageRun) -> Outcome:
        return Outcome.success()


class ExitHandler:
    """Attractor 4.4: SUCCESS at once; the engine checks goal gates before it gets here."""

    def execute(self, node: Node, context: Context, graph: Graph, stage: StageRun) -> Outcome:
        return Outcome.success()


class ConditionalHandler:
    """Attractor 4.7: SUCCESS; the engine's edge selection evaluates the outgoing conditions."""

    def execute(self, node: Node, context: Context, graph: Graph, stage: StageRun) -> Outcome:
        return Outcome.success(f"Conditional node evaluated: {node.id}")
