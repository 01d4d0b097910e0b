"""The seam between `resume --turn` and codergen backends: the resume point reaches the backend of its node
only, once, and never outlives that call (a backend that cannot continue an agent just runs the node)."""

from __future__ import annotations

from typing import Any

from orchestra_core.model.agent_resume import RESUME_KEYS, AgentResume, agent_resume_for
from orchestra_core.model.context import Context
from orchestra_core.model.graph import Node
from orchestra_core.model.outcome import Outcome, StageStatus
from tests.support.engine import Harness, graph

PIPELINE = "digraph p { start [shape=Mdiamond]; a; b; done [shape=Msquare]; start -> a -> b -> done }"
RESUME = AgentResume("a", 4, "langgraph:t:c")


class Seeing:
    """A backend that notes the resume point each call saw; `fail_first` fails its first call with RETRY."""

    def __init__(self, *, fail_first: bool = False) -> None:
        self.seen: list[tuple[str, AgentResume | None]] = []
        self.fail_first = fail_first

    def run(self, node: Node, prompt: str, context: Context, on_turn: Any = None) -> str | Outcome:
        self.seen.append((node.id, agent_resume_for(node.id, context)))
        if self.fail_first and len(self.seen) == 1:
            return Outcome(StageStatus.RETRY, failure_reason="flaky")
        return "ok"


def test_the_resume_point_reaches_its_node_once_and_is_gone_after() -> None:
    backend = Seeing()
    result = Harness(backend=backend).run(graph(PIPELINE), initial_context=RESUME.context_values())
    assert backend.seen == [("a", RESUME), ("b", None)]
    assert not set(RESUME_KEYS) & result.context.keys()


def test_a_retry_of_the_node_starts_its_agent_afresh() -> None:
    backend = Seeing(fail_first=True)
    dot = PIPELINE.replace("a;", "a [max_retries=1];")
    Harness(backend=backend).run(graph(dot), initial_context=RESUME.context_values())
    assert backend.seen == [("a", RESUME), ("a", None), ("b", None)]


def test_a_backend_that_ignores_the_keys_still_leaves_no_trace() -> None:
    result = Harness().run(graph(PIPELINE), initial_context=RESUME.context_values())  # simulated codergen
    assert result.status.value == "success" and not set(RESUME_KEYS) & result.context.keys()


def test_the_resume_point_is_read_for_its_own_node_only() -> None:
    context = Context(RESUME.context_values())
    assert agent_resume_for("a", context) == RESUME and agent_resume_for("b", context) is None
    assert agent_resume_for("a", Context({**RESUME.context_values(), "internal.resume_turn_number": "4"})) is None
