"""The `queue` lint rules: a queue name a worker can serve, one queue per parallel branch, and a warning for a queue
on a node that does no work of its own."""

from __future__ import annotations

import pytest

from orchestra_core.graph import parse_dot
from orchestra_core.validation import Diagnostic, Severity, validate


def lint(body: str) -> list[Diagnostic]:
    return validate(parse_dot(f"digraph G {{\n{body}\n}}"))


def rules(diagnostics: list[Diagnostic]) -> list[tuple[str, Severity, str | None]]:
    return [(d.rule, d.severity, d.node_id) for d in diagnostics]


FAN = """
    start [shape=Mdiamond]; exit [shape=Msquare]
    fan [shape=component QUEUE_FAN]
    a [prompt="a" QUEUE_A]; a2 [prompt="a2" QUEUE_A2]; b [prompt="b"]
    join [shape=tripleoctagon]
    start -> fan; fan -> a -> a2 -> join; fan -> b -> join; join -> exit
"""


def fan(**queues: str) -> str:
    body = FAN
    for name in ("FAN", "A2", "A"):
        queue = queues.get(name.lower())
        body = body.replace(f" QUEUE_{name}", f', queue="{queue}"' if queue is not None else "")
    return body


def test_queues_on_the_graph_a_parallel_node_and_a_branch_are_valid() -> None:
    assert lint('graph [queue="cpu"]\n' + fan(fan="gpu", a="gpu", a2="gpu")) == []
    assert lint(fan(a="gpu.large_2")) == []


@pytest.mark.parametrize("queue", ["two words", "-starts-with-dash", "a/b", "x" * 101, "gpu;rm"])
def test_a_queue_that_is_not_a_queue_name_is_an_error(queue: str) -> None:
    found = [d for d in lint(fan(a=queue)) if d.rule == "queue_name"]
    assert rules(found) == [("queue_name", Severity.ERROR, "a")]
    assert repr(queue) in found[0].message and found[0].fix
    on_graph = [d for d in lint(f'graph [queue="{queue}"]\n' + fan()) if d.rule == "queue_name"]
    assert rules(on_graph) == [("queue_name", Severity.ERROR, None)]


def test_a_branch_naming_two_queues_is_an_error_naming_its_nodes() -> None:
    found = [d for d in lint(fan(a="gpu", a2="cpu")) if d.rule == "queue_per_branch"]
    assert rules(found) == [("queue_per_branch", Severity.ERROR, "fan")]
    assert "fan -> a" in found[0].message and "a (gpu), a2 (cpu)" in found[0].message


def test_a_queue_on_a_node_that_does_no_work_is_a_warning() -> None:
    body = fan().replace("start [shape=Mdiamond]", 'start [shape=Mdiamond, queue="gpu"]')
    body = body.replace("join [shape=tripleoctagon]", 'join [shape=tripleoctagon, queue="gpu"]')
    found = [d for d in lint(body) if d.rule == "queue_placement"]
    assert rules(found) == [("queue_placement", Severity.WARNING, "start"), ("queue_placement", Severity.WARNING, "join")]
    assert all("no effect" in d.message for d in found)


def test_queue_is_a_known_attribute() -> None:
    assert not [d for d in lint('graph [queue="cpu"]\n' + fan(a="gpu")) if d.rule == "attribute_known"]
