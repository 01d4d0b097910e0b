"""The manager loop: settings under other Attractor runners' names, the stop key, the loop without a child (4.11)."""

from __future__ import annotations

from typing import Any

import pytest

from orchestra_core.engine.stage import StageRun
from orchestra_core.graph import Graph, Node
from orchestra_core.handlers.manager import is_truthy, manager_settings
from orchestra_core.model.checkpoint import RunStatus
from orchestra_core.model.context import Context
from orchestra_core.model.outcome import Outcome
from tests.support.engine import Harness, graph


def watcher(attrs: str) -> Graph:
    return graph(
        f"""
        digraph p {{
            start [shape=Mdiamond]; done [shape=Msquare]
            boss [shape=house, {attrs}]
            start -> boss -> done
        }}
        """
    )


def boss(attrs: str) -> Any:
    return watcher(attrs).nodes["boss"]


def test_orchestra_names_win_over_the_names_other_runners_use() -> None:
    both = manager_settings(boss('manager.max_cycles=3, max_cycles=9, manager.poll_interval="2s", wait_ms=5'))
    assert (both.max_cycles, both.max_cycles_key, both.poll_interval) == (3, "manager.max_cycles", 2.0)
    theirs = manager_settings(boss("max_cycles=9, wait_ms=250"))
    assert (theirs.max_cycles, theirs.max_cycles_key, theirs.poll_interval) == (9, "max_cycles", 0.25)
    neither = manager_settings(boss(""))
    assert (neither.max_cycles, neither.max_cycles_key, neither.poll_interval) == (1000, "max_cycles", 45.0)


@pytest.mark.parametrize("value", [True, "true", "TRUE", " yes ", "1", 1, 2.5])
def test_truthy_stop_values(value: Any) -> None:
    assert is_truthy(value)


@pytest.mark.parametrize("value", [None, False, "", "false", "no", "0", 0, "maybe", [1]])
def test_values_that_do_not_stop_the_loop(value: Any) -> None:
    assert not is_truthy(value)


def test_without_a_child_the_stop_key_in_the_context_ends_the_loop_with_success() -> None:
    result = Harness().run(
        watcher('max_cycles=3, stop_condition_key="release.ready", wait_ms=1'),
        initial_context={"release.ready": "yes"},
    )
    assert result.status is RunStatus.SUCCESS, result.failure_reason
    assert result.node_outcomes["boss"].notes == "Stop key release.ready is set (cycle 1)"


def test_without_a_child_the_stop_condition_is_checked_against_the_context() -> None:
    result = Harness().run(
        watcher('max_cycles=2, manager.stop_condition="phase=shipped", wait_ms=1'),
        initial_context={"phase": "shipped"},
    )
    assert result.status is RunStatus.SUCCESS, result.failure_reason
    assert result.node_outcomes["boss"].notes.startswith("Stop condition satisfied")


def test_without_a_child_exhausting_the_cycles_fails_naming_max_cycles() -> None:
    result = Harness().run(watcher('max_cycles=2, stop_condition_key="release.ready", wait_ms=1'))
    assert result.status is RunStatus.FAIL
    reason = result.node_outcomes["boss"].failure_reason
    assert reason.startswith(
        "manager loop exceeded max_cycles=2: stop_condition_key=release.ready never held"
    )


def test_autostart_false_watches_the_context_even_with_a_child_pipeline_named() -> None:
    pipeline = graph(
        """
        digraph p {
            graph [stack.child_dotfile="child.dot"]
            start [shape=Mdiamond]; done [shape=Msquare]
            boss [shape=house, stack.child_autostart=false, stop_condition_key="go"]
            start -> boss -> done
        }
        """
    )
    loaded: list[str] = []

    def loader(path: str) -> Graph:
        loaded.append(path)
        return pipeline

    result = Harness(pipeline_loader=loader).run(pipeline, initial_context={"go": True})
    assert result.status is RunStatus.SUCCESS, result.failure_reason
    assert loaded == []  # the child is never started


class HoldUntilStopped:
    """A child stage that only ends when its run is being stopped."""

    def execute(self, node: Node, context: Context, graph: Graph, stage: StageRun) -> Outcome:
        stage.engine.stop.wait(5)
        return Outcome.success()


def test_the_stop_key_also_ends_the_supervision_of_a_child() -> None:
    child = graph(
        """
        digraph child {
            start [shape=Mdiamond]; done [shape=Msquare]
            wait_here [type="hold"]; after
            start -> wait_here -> after -> done
        }
        """
    )
    parent = graph(
        """
        digraph p {
            graph [stack.child_dotfile="child.dot"]
            start [shape=Mdiamond]; done [shape=Msquare]
            boss [shape=house, stop_condition_key="go", wait_ms=5]
            start -> boss -> done
        }
        """,
        path="/pipelines/parent.dot",
    )
    harness = Harness(handlers={"hold": HoldUntilStopped()}, pipeline_loader=lambda path: child)
    result = harness.run(parent, initial_context={"go": "yes"})
    assert result.status is RunStatus.SUCCESS, result.failure_reason
    assert result.node_outcomes["boss"].notes == "Stop key go is set"
    assert "after" not in harness.directory("/runs/test/boss/child").checkpoints[-1].completed_nodes
