"""The traversal loop (Attractor 3.2, 11.3, 11.7): dispatch, recording, context keys, status files, events."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from orchestra_core.engine.stage import StageRun
from orchestra_core.graph import Graph, Node
from orchestra_core.model.cancellation import Cancellation
from orchestra_core.model.checkpoint import RunStatus
from orchestra_core.model.context import Context
from orchestra_core.model.events import (
    CheckpointSaved,
    EdgeSelected,
    PipelineCompleted,
    PipelineFailed,
    PipelineStarted,
    StageCompleted,
    StageFailed,
    StageStarted,
)
from orchestra_core.model.outcome import Outcome, StageStatus
from orchestra_core.testing.backends import ScriptedCodergenBackend
from tests.support.engine import Harness, graph, linear


class Recorder:
    """A custom handler that records what it saw and returns a fixed outcome."""

    def __init__(self, outcome: Outcome | None = None) -> None:
        self.outcome = outcome if outcome is not None else Outcome.success()
        self.seen: list[tuple[str, dict[str, Any], StageRun]] = []

    def execute(self, node: Node, context: Context, graph: Graph, stage: StageRun) -> Outcome | None:
        self.seen.append((node.id, context.snapshot(), stage))
        return self.outcome


def test_linear_pipeline_runs_every_node_in_order() -> None:
    harness = Harness()
    result = harness.run(linear("a", "b", "c"))
    assert result.status is RunStatus.SUCCESS
    assert result.completed_nodes == ("start", "a", "b", "c", "done")
    assert all(o.status is StageStatus.SUCCESS for o in result.node_outcomes.values())


def test_every_outcome_is_written_to_status_json() -> None:
    harness = Harness(backend=ScriptedCodergenBackend({"b": Outcome(StageStatus.SUCCESS, preferred_label="x", notes="hi")}))
    harness.run(linear("a", "b"))
    status = json.loads(harness.directory().read_stage_file("b", "status.json"))
    assert status == {
        "outcome": "success",
        "preferred_label": "x",
        "suggested_next_ids": [],
        "context_updates": {"last_stage": "b"},
        "notes": "hi",
    }


def test_codergen_writes_prompt_and_response_with_goal_expanded() -> None:
    harness = Harness()
    pipeline = graph(
        """
        digraph p {
            graph [goal="Create a hello world script"]
            start [shape=Mdiamond]; done [shape=Msquare]
            plan [prompt="Plan: $goal", fidelity="full"]
            start -> plan -> done
        }
        """
    )
    harness.run(pipeline)
    files = harness.directory().stage_files("plan")
    assert files["prompt.md"] == "Plan: Create a hello world script"
    assert files["response.md"] == "[Simulated] Response for stage: plan"


def test_context_updates_are_visible_to_the_next_node_and_built_in_keys_are_set() -> None:
    recorder = Recorder()
    harness = Harness(
        backend=ScriptedCodergenBackend({"a": Outcome(StageStatus.SUCCESS, preferred_label="go", context_updates={"context.answer": 42})}),
        handlers={"probe": recorder},
    )
    pipeline = graph(
        """
        digraph p {
            graph [goal="g", label="L"]
            start [shape=Mdiamond]; done [shape=Msquare]
            a; probe [type="probe"]
            start -> a -> probe -> done
        }
        """
    )
    harness.run(pipeline)
    _, seen, _ = recorder.seen[0]
    assert seen["context.answer"] == 42
    assert seen["outcome"] == "success"
    assert seen["preferred_label"] == "go"
    assert seen["last_stage"] == "a"
    assert seen["current_node"] == "probe"
    assert seen["graph.goal"] == "g" and seen["graph.label"] == "L"


def test_engine_sets_internal_keys_for_codergen_nodes() -> None:
    backend = ScriptedCodergenBackend({"a": lambda node, prompt, context: json.dumps(
        {k: context.get(k) for k in ("internal.fidelity", "internal.thread_key", "internal.session_id", "internal.stage_dir", "internal.resumed")}
    )})
    harness = Harness(backend=backend)
    harness.run(linear("a", extra=', default_fidelity="full"'), session_id="s-9")
    keys = json.loads(harness.directory().read_stage_file("a", "response.md"))
    assert keys == {
        "internal.fidelity": "full",
        "internal.thread_key": "start",
        "internal.session_id": "s-9",
        "internal.stage_dir": "/runs/test/a",
        "internal.resumed": False,
    }


def test_handler_resolution_prefers_type_then_shape() -> None:
    custom = Recorder()
    harness = Harness(handlers={"custom": custom})
    pipeline = graph(
        """
        digraph p {
            start [shape=Mdiamond]; done [shape=Msquare]
            a [type="custom", shape=hexagon]
            b [shape=diamond]
            start -> a -> b -> done
        }
        """
    )
    result = harness.run(pipeline)
    assert [seen[0] for seen in custom.seen] == ["a"]
    assert result.node_outcomes["b"].notes == "Conditional node evaluated: b"
    started = {e.node_id: e.handler_type for e in harness.log.of(StageStarted)}
    assert started == {"start": "start", "a": "custom", "b": "conditional", "done": "exit"}


def test_conditional_branching_on_success_and_failure() -> None:
    pipeline = graph(
        """
        digraph p {
            start [shape=Mdiamond]; done [shape=Msquare]
            work; check [shape=diamond]; ok_path; fail_path
            start -> work -> check
            check -> ok_path [condition="context.result=good"]
            check -> fail_path [condition="context.result!=good"]
            ok_path -> done
            fail_path -> done
        }
        """
    )
    good = ScriptedCodergenBackend({"work": Outcome(StageStatus.SUCCESS, context_updates={"result": "good"})})
    bad = ScriptedCodergenBackend({"work": Outcome(StageStatus.SUCCESS, context_updates={"result": "bad"})})
    assert "ok_path" in Harness(backend=good).run(pipeline).completed_nodes
    assert "fail_path" in Harness(backend=bad).run(pipeline).completed_nodes


def test_a_failed_stage_without_route_fails_the_pipeline_and_never_falls_through() -> None:
    harness = Harness(backend=ScriptedCodergenBackend({"a": "fail"}))
    result = harness.run(linear("a", "b"))
    assert result.status is RunStatus.FAIL
    assert result.completed_nodes == ("start", "a")
    assert result.failure_reason == "stage a failed: scripted fail for a"
    final = harness.checkpoints()[-1]
    assert (final.status, final.next_node, final.current_node) == (RunStatus.FAIL, None, "a")


def test_failure_routes_to_the_node_retry_target() -> None:
    backend = ScriptedCodergenBackend({"a": ["fail", "success"]})
    pipeline = graph(
        """
        digraph p {
            start [shape=Mdiamond]; done [shape=Msquare]
            prep; a [retry_target="prep"]
            start -> prep -> a -> done
        }
        """
    )
    result = Harness(backend=backend).run(pipeline)
    assert result.status is RunStatus.SUCCESS
    assert result.completed_nodes == ("start", "prep", "a", "prep", "a", "done")


def test_skipped_outcomes_are_not_recorded_but_routing_continues() -> None:
    harness = Harness(backend=ScriptedCodergenBackend({"b": StageStatus.SKIPPED}))
    result = harness.run(linear("a", "b", "c"))
    assert result.status is RunStatus.SUCCESS
    assert result.completed_nodes == ("start", "a", "c", "done")
    assert "b" not in result.node_outcomes
    assert result.context["last_stage"] == "c"


class WritesStatus:
    """A handler standing in for a stage (agent, script) that writes status.json itself."""

    def __init__(self, text: str | None, returned: Outcome | None = None) -> None:
        self.text = text
        self.returned = returned

    def execute(self, node: Node, context: Context, graph: Graph, stage: StageRun) -> Outcome | None:
        if self.text is not None:
            stage.write("status.json", self.text)
        return self.returned


def stage_graph() -> Graph:
    return graph(
        """
        digraph p {
            start [shape=Mdiamond]; done [shape=Msquare]
            s [type="stage"]; s2 [type="stage", auto_status=true]
            retry_here; elsewhere
            start -> s -> s2 -> done
            s -> elsewhere [condition="preferred_label=Elsewhere"]
            elsewhere -> done
        }
        """
    )


def test_a_status_file_written_by_the_stage_decides_the_outcome() -> None:
    document = {"outcome": "success", "preferred_label": "Elsewhere", "context_updates": {"k": "v"}, "notes": "n"}
    handler = WritesStatus(json.dumps(document), returned=Outcome(StageStatus.FAIL, context_updates={"from_handler": 1}))
    result = Harness(handlers={"stage": handler}).run(stage_graph())
    assert "elsewhere" in result.completed_nodes
    assert result.context["k"] == "v" and result.context["from_handler"] == 1


def test_a_malformed_status_file_is_a_failure_naming_the_problem() -> None:
    result = Harness(handlers={"stage": WritesStatus('{"outcome": "great"}')}).run(stage_graph())
    assert result.status is RunStatus.FAIL
    assert "/runs/test/s/status.json is malformed" in result.node_outcomes["s"].failure_reason
    not_json = Harness(handlers={"stage": WritesStatus("{nope")}).run(stage_graph())
    assert "malformed" in not_json.node_outcomes["s"].failure_reason


def test_a_stale_status_file_is_removed_before_the_stage_runs() -> None:
    harness = Harness(handlers={"stage": WritesStatus(None, returned=Outcome.success())})
    harness.dirs.open("/runs/test").write_stage_file("s", "status.json", '{"outcome": "fail"}')
    assert harness.run(stage_graph()).status is RunStatus.SUCCESS


def test_no_status_at_all_fails_unless_auto_status() -> None:
    result = Harness(handlers={"stage": WritesStatus(None)}).run(stage_graph())
    assert result.node_outcomes["s"].status is StageStatus.FAIL
    assert "auto_status" in result.node_outcomes["s"].failure_reason
    auto = graph(
        """
        digraph p {
            start [shape=Mdiamond]; done [shape=Msquare]
            s [type="stage", auto_status=true]
            start -> s -> done
        }
        """
    )
    result = Harness(handlers={"stage": WritesStatus(None)}).run(auto)
    assert result.status is RunStatus.SUCCESS
    assert result.node_outcomes["s"].notes == (
        "auto_status synthesized success (the handler reported no status and the stage wrote no status.json)"
    )
    assert harness_status_file(auto) is None  # other runners' scripts expect no status.json for it


def harness_status_file(pipeline: Graph) -> str | None:
    harness = Harness(handlers={"stage": WritesStatus(None)})
    harness.run(pipeline)
    return harness.directory().read_stage_file("s", "status.json")


class Raises:
    def __init__(self, error: BaseException) -> None:
        self.error = error
        self.calls = 0

    def execute(self, node: Node, context: Context, graph: Graph, stage: StageRun) -> Outcome:
        self.calls += 1
        raise self.error


def test_handler_exceptions_become_failures() -> None:
    handler = Raises(RuntimeError("kaboom"))
    pipeline = graph('digraph p { start [shape=Mdiamond]; done [shape=Msquare]; x [type="boom"]; start -> x -> done }')
    result = Harness(handlers={"boom": handler}).run(pipeline)
    assert result.status is RunStatus.FAIL
    assert result.node_outcomes["x"].failure_reason == "RuntimeError: kaboom"


def test_events_follow_the_run() -> None:
    harness = Harness()
    harness.run(linear("a"))
    kinds = harness.log.kinds
    assert kinds[0] == "PipelineStarted" and kinds[-1] == "PipelineCompleted"
    assert kinds.count("StageStarted") == kinds.count("StageCompleted") == 3
    assert kinds.count("CheckpointSaved") == 4  # the initial one, then one per node
    started = harness.log.of(PipelineStarted)[0]
    assert (started.name, started.start_node, started.resumed) == ("p", "start", False)
    completed = harness.log.of(StageCompleted)[1]
    assert (completed.node_id, completed.handler_type, completed.attempts, completed.index) == ("a", "codergen", 1, 2)
    assert completed.outcome.status is StageStatus.SUCCESS
    assert [e.target for e in harness.log.of(EdgeSelected)] == ["a", "done"]
    assert all(e.session_id == "session-1" and e.branch is None for e in harness.log.events)
    saved = harness.log.of(CheckpointSaved)[-1]
    assert saved.checkpoint.current_node == "done" and saved.node_id == "done"
    assert harness.log.of(PipelineCompleted)[0].completed_nodes == ("start", "a", "done")


def test_failure_events() -> None:
    harness = Harness(backend=ScriptedCodergenBackend({"a": "fail"}))
    harness.run(linear("a"))
    failed = harness.log.of(StageFailed)
    assert [(e.node_id, e.will_retry) for e in failed] == [("a", False)]
    assert harness.log.of(PipelineFailed)[0].error.startswith("stage a failed")


class Broken:
    def on_event(self, event: object) -> None:
        raise ValueError("observer bug")


def test_a_failing_observer_never_breaks_the_run(caplog: pytest.LogCaptureFixture) -> None:
    harness = Harness(observers=[Broken()])
    with caplog.at_level("WARNING", logger="orchestra.engine"):
        assert harness.run(linear("a")).status is RunStatus.SUCCESS
    assert len(harness.log.of(StageCompleted)) == 3
    warnings = [r for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 1 and "ValueError: observer bug" in warnings[0].getMessage()


def test_iterating_events() -> None:
    harness = Harness()
    stream = harness.engine.iter_events(linear("a", "b"), session_id="s", logs_root="/runs/it")
    kinds = [event.kind for event in stream]
    assert kinds[0] == "PipelineStarted" and kinds[-1] == "PipelineCompleted"
    assert stream.result.completed_nodes == ("start", "a", "b", "done")


def test_iterating_re_raises_errors_after_the_events() -> None:
    class Exploding:
        def open(self, root: str) -> Any:
            raise OSError("no such disk")

    harness = Harness(run_directory=Exploding())
    with pytest.raises(OSError, match="no such disk"):
        list(harness.engine.iter_events(linear("a"), session_id="s", logs_root="/x"))


def test_max_node_visits_stops_an_endless_loop() -> None:
    pipeline = graph(
        """
        digraph p {
            start [shape=Mdiamond]; done [shape=Msquare]
            a [max_visits=0]; b [max_visits=0]
            start -> a -> b
            b -> a [condition="outcome=success"]
            b -> done [condition="outcome=fail"]
        }
        """
    )
    harness = Harness(max_node_visits=50)
    result = harness.run(pipeline)
    assert result.status is RunStatus.FAIL
    assert "stopped after 50 node visits" in result.failure_reason and "max_node_visits" in result.failure_reason
    assert harness.checkpoints()[-1].status is RunStatus.RUNNING  # resumable with a higher limit


def test_max_node_visits_from_the_graph() -> None:
    pipeline = graph(
        """
        digraph p {
            graph [max_node_visits=7]
            start [shape=Mdiamond]; a; start -> a; a -> a
        }
        """
    )
    result = Harness().run(pipeline)
    assert result.status is RunStatus.FAIL and "after 7 node visits" in result.failure_reason


def test_a_stop_request_ends_the_run_before_the_next_node() -> None:
    stop = threading.Event()

    class StopAfter:
        def execute(self, node: Node, context: Context, graph: Graph, stage: StageRun) -> Outcome:
            stop.set()
            return Outcome.success()

    pipeline = graph('digraph p { start [shape=Mdiamond]; done [shape=Msquare]; a [type="stopper"]; b; start -> a -> b -> done }')
    harness = Harness(handlers={"stopper": StopAfter()})
    result = harness.run(pipeline, stop=stop)
    assert result.status is RunStatus.FAIL and result.failure_reason == "stopped before node b"
    assert harness.checkpoints()[-1].next_node == "b"


def test_a_cancelled_stop_cancels_the_attempt_running_now_and_does_not_retry_it() -> None:
    stop = Cancellation("the run was cancelled")
    attempts: list[int] = []

    class WaitForCancel:
        def execute(self, node: Node, context: Context, graph: Graph, stage: StageRun) -> Outcome:
            attempts.append(stage.attempt)
            cancelled = threading.Event()
            stage.cancel.on_cancel(cancelled.set)
            stop.cancel()  # as a server's cancel does, while the attempt runs
            assert cancelled.wait(30), "stopping the run did not cancel the running attempt"
            return Outcome.fail("cancelled")

    pipeline = graph(
        'digraph p { start [shape=Mdiamond]; done [shape=Msquare]; a [type="waiter", max_retries=3]; b; '
        "start -> a -> b -> done }"
    )
    result = Harness(handlers={"waiter": WaitForCancel()}).run(pipeline, stop=stop)
    assert result.status is RunStatus.FAIL and attempts == [1]
    assert result.node_outcomes["a"].failure_reason == "cancelled"


def test_no_start_node_fails_clearly() -> None:
    result = Harness().run(graph("digraph p { a; b; a -> b }"))
    assert result.status is RunStatus.FAIL and "start node" in result.failure_reason


def test_bad_attribute_values_fail_the_node_with_the_attribute_named() -> None:
    pipeline = graph('digraph p { start [shape=Mdiamond]; done [shape=Msquare]; a [timeout="soon"]; start -> a -> done }')
    result = Harness().run(pipeline)
    assert result.status is RunStatus.FAIL
    assert "timeout='soon'" in result.node_outcomes["a"].failure_reason


def test_handlers_store_artifacts_and_the_completion_event_counts_them() -> None:
    class Stores:
        def execute(self, node: Node, context: Context, graph: Graph, stage: StageRun) -> Outcome:
            stage.artifacts.store(f"{node.id}.report", "report", {"lines": 3})
            return Outcome.success()

    pipeline = graph('digraph p { start [shape=Mdiamond]; r [type="report"]; done [shape=Msquare]; start -> r -> done }')
    harness = Harness(handlers={"report": Stores()})
    harness.run(pipeline)
    assert harness.log.of(PipelineCompleted)[0].artifact_count == 1
    assert harness.directory().artifacts.retrieve("r.report") == {"lines": 3}
