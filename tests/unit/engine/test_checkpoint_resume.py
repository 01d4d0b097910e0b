"""Checkpoints (5.3), checkpoint sinks and resume: a resumed run ends exactly as an uninterrupted one."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
from attrs import evolve

from orchestra_core.model.checkpoint import Checkpoint, RunStatus
from orchestra_core.model.events import CheckpointSaved, EngineEvent, PipelineStarted
from orchestra_core.model.outcome import Outcome, StageStatus
from orchestra_core.testing.backends import ScriptedCodergenBackend
from orchestra_core.testing.run_directory import InMemoryRunDirectories
from tests.support.engine import Harness, comparable, graph

PIPELINE = graph(
    """
    digraph p {
        graph [goal="resume me"]
        start [shape=Mdiamond]; done [shape=Msquare]
        plan; implement [goal_gate=true, retry_target="plan"]; review; gate [shape=diamond]
        start -> plan -> implement -> review -> gate
        gate -> done [condition="context.approved=yes"]
        gate -> implement [condition="context.approved!=yes", label="again"]
    }
    """
)


def script() -> ScriptedCodergenBackend:
    return ScriptedCodergenBackend(
        {
            "implement": ["fail", "success", "success"],
            "review": [
                Outcome(StageStatus.SUCCESS, preferred_label="needs work", context_updates={"approved": "no"}),
                Outcome(StageStatus.SUCCESS, context_updates={"approved": "yes"}),
            ],
        }
    )


class StopAfter:
    """Sets a stop event once the checkpoint after the n-th node visit is saved."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.stop = threading.Event()

    def on_event(self, event: EngineEvent) -> None:
        if isinstance(event, CheckpointSaved) and event.checkpoint.node_visits >= self.count:
            self.stop.set()


def uninterrupted() -> Checkpoint:
    harness = Harness(backend=script())
    result = harness.run(PIPELINE, root="/r", session_id="s")
    assert result.status is RunStatus.SUCCESS
    return harness.checkpoints("/r")[-1]


@pytest.mark.parametrize("after", [1, 2, 3, 5, 7])
def test_resume_ends_exactly_as_an_uninterrupted_run(after: int) -> None:
    dirs = InMemoryRunDirectories()
    stopper = StopAfter(after)
    first_backend = script()
    first = Harness(backend=first_backend, run_directory=dirs, observers=[stopper])
    interrupted = first.engine.run(PIPELINE, session_id="s", logs_root="/r", stop=stopper.stop)
    assert interrupted.status is RunStatus.FAIL and interrupted.failure_reason.startswith("stopped before")
    checkpoint = dirs.opened["/r"].load_checkpoint()
    assert checkpoint is not None and not checkpoint.finished
    # the second process replays the same script, minus the calls already made
    second_backend = script()
    for call in first_backend.calls:
        second_backend.run(PIPELINE.nodes[call.node_id], "", None)  # type: ignore[arg-type]
    already = len(second_backend.calls)
    second = Harness(backend=second_backend, run_directory=dirs)
    result = second.engine.run(PIPELINE, session_id="s", logs_root="/r", resume_from=checkpoint)
    assert result.status is RunStatus.SUCCESS
    assert comparable(dirs.opened["/r"].checkpoints[-1]) == comparable(uninterrupted())
    rerun = [call.node_id for call in second_backend.calls[already:]]
    assert len(first_backend.calls) + len(rerun) == len(script_calls())


def script_calls() -> list[str]:
    backend = script()
    Harness(backend=backend).run(PIPELINE)
    return [call.node_id for call in backend.calls]


def test_finished_nodes_are_not_run_again() -> None:
    dirs = InMemoryRunDirectories()
    crash_once = {"done": False}

    def crash(node: Any, prompt: str, context: Any) -> str:
        if not crash_once["done"]:
            crash_once["done"] = True
            raise KeyboardInterrupt
        return "reviewed"

    backend = ScriptedCodergenBackend({"review": crash})
    harness = Harness(backend=backend, run_directory=dirs)
    with pytest.raises(KeyboardInterrupt):
        harness.engine.run(PIPELINE, session_id="s", logs_root="/r", initial_context={"approved": "yes"})
    checkpoint = dirs.opened["/r"].load_checkpoint()
    assert (checkpoint.current_node, checkpoint.next_node) == ("implement", "review")
    resumed = Harness(backend=backend, run_directory=dirs)
    result = resumed.engine.run(PIPELINE, session_id="s", logs_root="/r", resume_from=checkpoint)
    assert result.status is RunStatus.SUCCESS
    assert [c.node_id for c in backend.calls] == ["plan", "implement", "review", "review"]
    assert result.completed_nodes == ("start", "plan", "implement", "review", "gate", "done")
    started = resumed.log.of(PipelineStarted)[0]
    assert (started.resumed, started.start_node) == (True, "review")


def test_resuming_a_finished_run_returns_its_result_without_running() -> None:
    dirs = InMemoryRunDirectories()
    first = Harness(backend=script(), run_directory=dirs)
    done = first.engine.run(PIPELINE, session_id="s", logs_root="/r")
    backend = script()
    again = Harness(backend=backend, run_directory=dirs)
    result = again.engine.run(PIPELINE, session_id="s", logs_root="/r", resume_from=dirs.opened["/r"].load_checkpoint())
    assert backend.calls == []
    assert (result.status, result.completed_nodes) == (done.status, done.completed_nodes)
    assert result.checkpoint is not None


FRAGILE = graph(
    """
    digraph p {
        start [shape=Mdiamond]; done [shape=Msquare]
        plan; build; ship
        start -> plan -> build -> ship -> done
    }
    """
)


def build_when_fixed(node: Any, prompt: str, context: Any) -> Outcome:
    if context.get("fixed") == "yes":
        return Outcome.success("built")
    return Outcome.fail("not fixed")


def test_resuming_a_failed_run_runs_the_failed_node_again_with_the_checkpoint_context() -> None:
    dirs = InMemoryRunDirectories()
    backend = ScriptedCodergenBackend({"build": build_when_fixed})
    failed = Harness(backend=backend, run_directory=dirs).engine.run(FRAGILE, session_id="s", logs_root="/r")
    assert failed.status is RunStatus.FAIL
    checkpoint = dirs.opened["/r"].load_checkpoint()
    assert (checkpoint.status, checkpoint.current_node) == (RunStatus.FAIL, "build")
    patched = evolve(checkpoint, context={**checkpoint.context, "fixed": "yes"})
    resumed = Harness(backend=backend, run_directory=dirs)
    result = resumed.engine.run(FRAGILE, session_id="s", logs_root="/r", resume_from=patched)
    assert result.status is RunStatus.SUCCESS, result.failure_reason
    assert [c.node_id for c in backend.calls] == ["plan", "build", "build", "ship"]
    assert result.completed_nodes == ("start", "plan", "build", "build", "ship", "done")
    assert resumed.log.of(PipelineStarted)[0].start_node == "build"


def test_a_failed_run_fails_again_when_the_failed_node_fails_again() -> None:
    dirs = InMemoryRunDirectories()
    backend = ScriptedCodergenBackend({"build": build_when_fixed})
    Harness(backend=backend, run_directory=dirs).engine.run(FRAGILE, session_id="s", logs_root="/r")
    again = Harness(backend=backend, run_directory=dirs).engine.run(
        FRAGILE, session_id="s", logs_root="/r", resume_from=dirs.opened["/r"].load_checkpoint()
    )
    assert again.status is RunStatus.FAIL and "not fixed" in again.failure_reason
    assert [c.node_id for c in backend.calls] == ["plan", "build", "build"]


def test_a_run_that_failed_at_the_exit_goal_gate_checks_the_gates_again_on_resume() -> None:
    gated = """
        digraph p {
            start [shape=Mdiamond]; done [shape=Msquare]
            plan; tests [goal_gate=true%s]
            start -> plan -> tests
            tests -> done [condition="outcome=fail"]
            tests -> done
        }
    """
    dirs = InMemoryRunDirectories()
    backend = ScriptedCodergenBackend({"tests": ["fail", "success"]})
    failed = Harness(backend=backend, run_directory=dirs).engine.run(graph(gated % ""), session_id="s", logs_root="/r")
    assert failed.status is RunStatus.FAIL and "goal" in failed.failure_reason
    checkpoint = dirs.opened["/r"].load_checkpoint()
    # the user adds a retry target to the pipeline: the gate check at the exit now sends the run there
    resumed = Harness(backend=backend, run_directory=dirs)
    result = resumed.engine.run(graph(gated % ', retry_target="plan"'), session_id="s", logs_root="/r", resume_from=checkpoint)
    assert result.status is RunStatus.SUCCESS, result.failure_reason
    assert [c.node_id for c in backend.calls] == ["plan", "tests", "plan", "tests"]
    assert resumed.log.of(PipelineStarted)[0].start_node == "done"


def fidelity_probe(node: Any, prompt: str, context: Any) -> str:
    return context.get("internal.fidelity") + "|" + str(context.get("internal.resumed"))


def test_full_fidelity_degrades_to_summary_high_for_the_first_resumed_node() -> None:
    pipeline = graph(
        """
        digraph p {
            graph [default_fidelity="full"]
            start [shape=Mdiamond]; done [shape=Msquare]
            a; b; c
            start -> a -> b -> c -> done
        }
        """
    )
    dirs = InMemoryRunDirectories()
    stopper = StopAfter(2)
    backend = ScriptedCodergenBackend({"a": fidelity_probe, "b": fidelity_probe, "c": fidelity_probe})
    Harness(backend=backend, run_directory=dirs, observers=[stopper]).engine.run(
        pipeline, session_id="s", logs_root="/r", stop=stopper.stop
    )
    checkpoint = dirs.opened["/r"].load_checkpoint()
    Harness(backend=backend, run_directory=dirs).engine.run(pipeline, session_id="s", logs_root="/r", resume_from=checkpoint)
    responses = {node: dirs.opened["/r"].read_stage_file(node, "response.md") for node in "abc"}
    assert responses == {"a": "full|False", "b": "summary:high|True", "c": "full|False"}


def test_resume_keeps_the_incoming_edge_attributes() -> None:
    pipeline = graph(
        """
        digraph p {
            start [shape=Mdiamond]; done [shape=Msquare]
            a; b
            start -> a
            a -> b [fidelity="truncate"]
            b -> done
        }
        """
    )
    dirs = InMemoryRunDirectories()
    stopper = StopAfter(2)
    backend = ScriptedCodergenBackend({"b": fidelity_probe})
    Harness(backend=backend, run_directory=dirs, observers=[stopper]).engine.run(
        pipeline, session_id="s", logs_root="/r", stop=stopper.stop
    )
    Harness(backend=backend, run_directory=dirs).engine.run(
        pipeline, session_id="s", logs_root="/r", resume_from=dirs.opened["/r"].load_checkpoint()
    )
    assert dirs.opened["/r"].read_stage_file("b", "response.md") == "truncate|True"


def test_resume_after_a_loop_restart_starts_over_from_the_manifest_context() -> None:
    pipeline = graph(
        """
        digraph p {
            start [shape=Mdiamond]; done [shape=Msquare]
            a; check
            start -> a -> check
            check -> a [condition="outcome=fail", loop_restart=true]
            check -> done [condition="outcome=success"]
        }
        """
    )
    dirs = InMemoryRunDirectories()
    stopper = StopAfter(3)
    first = Harness(backend=ScriptedCodergenBackend({"check": "fail"}), run_directory=dirs, observers=[stopper])
    first.engine.run(pipeline, session_id="s", logs_root="/r", initial_context={"ticket": "T-7"}, stop=stopper.stop)
    checkpoint = dirs.opened["/r"].load_checkpoint()
    second = Harness(backend=ScriptedCodergenBackend({"check": ["fail", "success"]}), run_directory=dirs)
    result = second.engine.run(pipeline, session_id="s", logs_root="/r", resume_from=checkpoint)
    assert result.status is RunStatus.SUCCESS
    assert result.context["ticket"] == "T-7"
    assert dirs.opened["/r"].manifest.resumed_at


class Sink:
    def __init__(self, fail_at: int | None = None) -> None:
        self.saved: list[Checkpoint] = []
        self.fail_at = fail_at

    def save(self, checkpoint: Checkpoint) -> None:
        if self.fail_at is not None and len(self.saved) == self.fail_at:
            raise ConnectionError("store unreachable")
        self.saved.append(checkpoint)


def test_checkpoint_sinks_receive_every_checkpoint() -> None:
    sink = Sink()
    harness = Harness(sinks=[sink])
    harness.run(PIPELINE, initial_context={"approved": "yes"})
    assert [c.current_node for c in sink.saved] == [c.current_node for c in harness.checkpoints()]
    assert sink.saved[-1].status is RunStatus.SUCCESS


def test_a_failing_sink_aborts_the_run_with_a_clear_error() -> None:
    backend = ScriptedCodergenBackend()
    harness = Harness(backend=backend, sinks=[Sink(fail_at=2)])
    result = harness.run(PIPELINE, initial_context={"approved": "yes"})
    assert result.status is RunStatus.FAIL
    assert "could not save the checkpoint after plan to checkpoint sink" in result.failure_reason
    assert "store unreachable" in result.failure_reason
    assert [c.node_id for c in backend.calls] == ["plan"]


def test_workspace_snapshot_is_taken_for_each_checkpoint() -> None:
    shas = iter(f"sha{i}" for i in range(100))
    harness = Harness()
    harness.engine.workspace_snapshot = lambda: {"backend": next(shas)}
    harness.run(PIPELINE, initial_context={"approved": "yes"})
    assert [c.workspace_snapshot["backend"] for c in harness.checkpoints()][:3] == ["sha0", "sha1", "sha2"]


def test_checkpoints_hold_full_outcomes_and_context() -> None:
    harness = Harness(backend=script())
    harness.run(PIPELINE)
    last = harness.checkpoints()[-1]
    assert last.node_outcomes["review"].context_updates == {"approved": "yes", "last_stage": "review"}
    assert last.context["approved"] == "yes"
    assert json.loads(json.dumps(dict(last.context)))  # plain JSON values
    assert last.node_visits == len(last.completed_nodes)
