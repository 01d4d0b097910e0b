"""A loop never runs forever by default: every node may run DEFAULT_MAX_VISITS times per run unless the node
(`max_visits`) or the graph (`default_max_visits`) says otherwise, `0` lifting the bound. Visits count over
the whole run: resumes and loop restarts included, and in parallel branches; retries are not visits."""

from __future__ import annotations

from orchestra_core.graph.visits import DEFAULT_MAX_VISITS
from orchestra_core.model.checkpoint import RunStatus
from orchestra_core.model.outcome import Outcome
from orchestra_core.testing.backends import ScriptedCodergenBackend
from orchestra_core.testing.run_directory import InMemoryRunDirectories
from tests.support.engine import Harness, graph


def loop(graph_attrs: str = "", work_attrs: str = "", restart: bool = False) -> str:
    """`work` goes round (by a plain edge, or by starting the run over) until the context says stop."""
    again = 'work -> work [condition="context.stop!=yes", loop_restart=true]' if restart else (
        'work -> work [condition="context.stop!=yes"]'
    )
    return f"""
    digraph loop {{
        graph [{graph_attrs}]
        start [shape=Mdiamond]; done [shape=Msquare]
        work [prompt="try", {work_attrs}]
        start -> work
        work -> done [condition="context.stop=yes"]
        {again}
    }}
    """


STOP = Outcome.success(context_updates={"stop": "yes"})


def test_the_default_bound_ends_an_endless_loop_saying_which_node_how_often_and_how_to_raise_it() -> None:
    backend = ScriptedCodergenBackend({"work": "success"})
    harness = Harness(backend=backend)
    result = harness.run(graph(loop()))
    assert result.status is RunStatus.FAIL
    assert result.failure_reason == (
        f"node work exceeded the default visit bound ({DEFAULT_MAX_VISITS} runs of a node): it already ran "
        f"{DEFAULT_MAX_VISITS} times and a loop led back to it; to allow more, set max_visits=N on work or "
        "default_max_visits=N on the graph (0 lifts the bound)"
    )
    assert backend.visits("work") == DEFAULT_MAX_VISITS
    last = harness.checkpoints()[-1]
    assert (last.status, last.failure_reason) == (RunStatus.FAIL, result.failure_reason)


def test_the_graph_sets_the_bound_of_every_node_and_a_node_s_own_wins() -> None:
    backend = ScriptedCodergenBackend({"work": "success"})
    result = Harness(backend=backend).run(graph(loop("default_max_visits=3")))
    assert result.failure_reason.startswith("node work exceeded the graph's default_max_visits=3: it already ran 3 times")
    assert backend.visits("work") == 3

    backend = ScriptedCodergenBackend({"work": "success"})
    result = Harness(backend=backend).run(graph(loop("default_max_visits=3", "max_visits=5")))
    assert result.failure_reason.startswith("node work exceeded max_visits=5: it already ran 5 times")
    assert backend.visits("work") == 5


def test_zero_lifts_the_bound_on_the_node_or_on_the_graph() -> None:
    runs = DEFAULT_MAX_VISITS + 10
    for graph_attrs, work_attrs in (("", "max_visits=0"), ("default_max_visits=0", ""), ("default_max_visits=2", "max_visits=0")):
        backend = ScriptedCodergenBackend({"work": ["success"] * (runs - 1) + [STOP]})
        result = Harness(backend=backend).run(graph(loop(graph_attrs, work_attrs)))
        assert result.status is RunStatus.SUCCESS, (graph_attrs, work_attrs, result.failure_reason)
        assert backend.visits("work") == runs


def test_retries_are_not_visits() -> None:
    pipeline = graph(
        'digraph p { start [shape=Mdiamond]; done [shape=Msquare]; work [max_visits=1, max_retries=3]; start -> work -> done }'
    )
    backend = ScriptedCodergenBackend({"work": ["retry", "retry", "retry", "success"]})
    result = Harness(backend=backend).run(pipeline)
    assert result.status is RunStatus.SUCCESS, result.failure_reason
    assert backend.visits("work") == 4


def test_visits_before_a_resume_count_against_the_default_bound() -> None:
    dirs = InMemoryRunDirectories()
    first = Harness(backend=ScriptedCodergenBackend({"work": "success"}), run_directory=dirs, max_node_visits=8)
    stopped = first.engine.run(graph(loop()), session_id="s", logs_root="/r")
    assert "max_node_visits" in stopped.failure_reason  # the run-wide limit stopped it: start and 7 visits of work
    checkpoint = dirs.opened["/r"].load_checkpoint()
    assert checkpoint is not None

    backend = ScriptedCodergenBackend({"work": "success"})
    resumed = Harness(backend=backend, run_directory=dirs)
    result = resumed.engine.run(graph(loop()), session_id="s", logs_root="/r", resume_from=checkpoint)
    assert result.failure_reason.startswith(f"node work exceeded the default visit bound ({DEFAULT_MAX_VISITS} runs")
    assert backend.visits("work") == DEFAULT_MAX_VISITS - 7


def test_a_loop_restart_does_not_reset_the_visits_also_across_a_resume() -> None:
    backend = ScriptedCodergenBackend({"work": "success"})
    result = Harness(backend=backend).run(graph(loop("default_max_visits=4", restart=True)))
    assert result.failure_reason.startswith("node work exceeded the graph's default_max_visits=4: it already ran 4 times")
    assert backend.visits("work") == 4

    dirs = InMemoryRunDirectories()
    first = Harness(backend=ScriptedCodergenBackend({"work": "success"}), run_directory=dirs, max_node_visits=5)
    stopped = first.engine.run(graph(loop("default_max_visits=6", restart=True)), session_id="s", logs_root="/r")
    assert "max_node_visits" in stopped.failure_reason
    checkpoint = dirs.opened["/r"].load_checkpoint()
    assert checkpoint is not None and checkpoint.loop_restarts == 4  # start, then work in each of four rounds
    backend = ScriptedCodergenBackend({"work": "success"})
    resumed = Harness(backend=backend, run_directory=dirs)
    result = resumed.engine.run(
        graph(loop("default_max_visits=6", restart=True)), session_id="s", logs_root="/r", resume_from=checkpoint
    )
    assert result.failure_reason.startswith("node work exceeded the graph's default_max_visits=6: it already ran 6 times")
    assert backend.visits("work") == 6 - 4


def test_a_node_in_a_parallel_branch_counts_the_run_s_earlier_visits() -> None:
    pipeline = graph(
        """
        digraph rounds {
            graph [default_max_visits=2]
            start [shape=Mdiamond]; done [shape=Msquare]
            fan [shape=component, max_visits=0]; join [shape=tripleoctagon, max_visits=0]
            check [shape=diamond, max_visits=0]
            a; b [max_visits=0]
            start -> fan
            fan -> a -> join
            fan -> b -> join
            join -> check
            check -> done [condition="context.parallel.failure_count=1"]
            check -> fan [condition="context.parallel.failure_count!=1"]
        }
        """
    )
    backend = ScriptedCodergenBackend({"a": "success", "b": "success"})
    result = Harness(backend=backend).run(pipeline)
    assert result.status is RunStatus.SUCCESS, result.failure_reason
    assert (backend.visits("a"), backend.visits("b")) == (2, 3)
    [refused] = [r for r in result.context["parallel.results"] if r["id"] == "a"]
    assert refused["failure_reason"].startswith("node a exceeded the graph's default_max_visits=2: it already ran 2 times")
