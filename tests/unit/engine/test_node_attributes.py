"""Node attributes other Attractor runners honour: max_visits (main line, branches, resume) and goal-gate failures."""

from __future__ import annotations

import pytest

from orchestra_core.engine.routing import max_visits_exceeded
from orchestra_core.graph import Node
from orchestra_core.model.checkpoint import RunStatus
from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.outcome import Outcome
from orchestra_core.testing.backends import ScriptedCodergenBackend
from orchestra_core.testing.run_directory import InMemoryRunDirectories
from tests.support.engine import Harness, graph

# `work` loops back to itself until the context says stop; it may run three times.
LOOP = """
digraph loop {
    start [shape=Mdiamond]; done [shape=Msquare]
    work [max_visits=3]
    start -> work
    work -> done [condition="context.stop=yes"]
    work -> work
}
"""


def test_max_visits_counts_earlier_visits_and_ignores_a_missing_or_non_positive_limit() -> None:
    node = Node("work", {"max_visits": "2"})
    assert max_visits_exceeded(node, ["start", "work"]) is None
    assert max_visits_exceeded(node, ["work", "other", "work"]) == (
        "node work exceeded max_visits=2: it already ran 2 times and a loop led back to it"
    )
    assert max_visits_exceeded(Node("work"), ["work"] * 50) is None
    assert max_visits_exceeded(Node("work", {"max_visits": "0"}), ["work"] * 50) is None
    with pytest.raises(OrchestraError, match="max_visits"):
        max_visits_exceeded(Node("work", {"max_visits": "often"}), [])


def test_a_loop_stops_when_it_would_visit_a_node_one_time_more_than_max_visits() -> None:
    backend = ScriptedCodergenBackend({"work": "success"})
    harness = Harness(backend=backend)
    result = harness.run(graph(LOOP))
    assert result.status is RunStatus.FAIL
    assert result.failure_reason.startswith("node work exceeded max_visits=3")
    assert backend.visits("work") == 3
    last = harness.checkpoints()[-1]
    assert (last.status, last.failure_reason) == (RunStatus.FAIL, result.failure_reason)


def test_a_loop_that_leaves_on_its_last_allowed_visit_succeeds() -> None:
    stop = Outcome.success(context_updates={"stop": "yes"})
    backend = ScriptedCodergenBackend({"work": ["success", "success", stop]})
    result = Harness(backend=backend).run(graph(LOOP))
    assert result.status is RunStatus.SUCCESS, result.failure_reason
    assert result.completed_nodes == ("start", "work", "work", "work", "done")


def test_visits_before_a_resume_count() -> None:
    dirs = InMemoryRunDirectories()
    first = Harness(backend=ScriptedCodergenBackend({"work": "success"}), run_directory=dirs, max_node_visits=3)
    stopped = first.engine.run(graph(LOOP), session_id="s", logs_root="/r")
    assert "max_node_visits" in stopped.failure_reason  # the global limit stopped it after start, work, work
    checkpoint = dirs.opened["/r"].load_checkpoint()
    assert checkpoint is not None and checkpoint.completed_nodes == ("start", "work", "work")

    backend = ScriptedCodergenBackend({"work": "success"})
    resumed = Harness(backend=backend, run_directory=dirs)
    result = resumed.engine.run(graph(LOOP), session_id="s", logs_root="/r", resume_from=checkpoint)
    assert result.failure_reason.startswith("node work exceeded max_visits=3: it already ran 3 times")
    assert backend.visits("work") == 1


BRANCHED = """
digraph branched {
    start [shape=Mdiamond]; done [shape=Msquare]
    fan [shape=component]; join [shape=tripleoctagon]
    quick; spin [max_visits=2]
    start -> fan
    fan -> quick -> join
    fan -> spin
    spin -> join [condition="context.stop=yes"]
    spin -> spin
    join -> done
}
"""


def test_max_visits_holds_inside_a_parallel_branch() -> None:
    backend = ScriptedCodergenBackend({"spin": "success", "quick": "success"})
    harness = Harness(backend=backend)
    result = harness.run(graph(BRANCHED))
    assert backend.visits("spin") == 2
    records = {record["id"]: record for record in result.context["parallel.results"]}
    assert records["spin"]["status"] == "fail"
    assert result.context["parallel.branch.spin.status"] == "fail"


GATED = """
digraph gated {
    start [shape=Mdiamond]; done [shape=Msquare]
    check [goal_gate=true]
    start -> check -> done
}
"""


def test_a_failed_goal_gate_without_a_failure_route_says_goal_gate_and_names_the_node() -> None:
    result = Harness(backend=ScriptedCodergenBackend({"check": "fail"})).run(graph(GATED))
    assert result.status is RunStatus.FAIL
    assert result.failure_reason.startswith("goal gate check is unsatisfied (fail")
    assert result.failure_reason.endswith("and has no retry target")


def test_a_partially_successful_goal_gate_satisfies_it() -> None:
    result = Harness(backend=ScriptedCodergenBackend({"check": "partial_success"})).run(graph(GATED))
    assert result.status is RunStatus.SUCCESS
    assert result.node_outcomes["check"].status.value == "partial_success"
