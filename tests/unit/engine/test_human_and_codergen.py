"""wait.human (4.6) and codergen (4.5) handlers, custom handlers and the registry (4.2, 4.12)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from orchestra_core.engine.stage import StageRun
from orchestra_core.graph import Graph, Node
from orchestra_core.handlers import CodergenHandler, HandlerRegistry, build_registry
from orchestra_core.handlers.human import gate_choices
from orchestra_core.interview import (
    Answer,
    AutoApproveInterviewer,
    CallbackInterviewer,
    Question,
    QueueInterviewer,
    RecordingInterviewer,
)
from orchestra_core.model.checkpoint import RunStatus
from orchestra_core.model.context import Context
from orchestra_core.model.events import InterviewCompleted, InterviewStarted, InterviewTimeout
from orchestra_core.model.outcome import Outcome, StageStatus
from orchestra_core.testing.backends import ScriptedCodergenBackend
from tests.support.engine import Harness, graph

GATE = graph(
    """
    digraph p {
        start [shape=Mdiamond]; done [shape=Msquare]
        review [shape=hexagon, label="Ship it?"]
        ship; fix
        start -> review
        review -> ship [label="[A] Approve"]
        review -> fix [label="[R] Revise"]
        ship -> done
        fix -> done
    }
    """
)


def test_gate_presents_edge_labels_as_choices_and_routes_on_the_selection() -> None:
    recording = RecordingInterviewer(QueueInterviewer([Answer("R")]))
    harness = Harness(interviewer=recording)
    result = harness.run(GATE)
    question, answer = recording.recordings[0]
    assert question.text == "Ship it?" and question.stage == "review"
    assert [(o.key, o.label) for o in question.options] == [("A", "[A] Approve"), ("R", "[R] Revise")]
    assert result.completed_nodes == ("start", "review", "fix", "done")
    outcome = result.node_outcomes["review"]
    assert (outcome.preferred_label, outcome.suggested_next_ids) == ("[R] Revise", ("fix",))
    assert result.context["human.gate.selected"] == "R" and result.context["human.gate.label"] == "[R] Revise"
    assert [e.kind for e in harness.log.events if "Interview" in e.kind] == ["InterviewStarted", "InterviewCompleted"]
    assert harness.log.of(InterviewCompleted)[0].answer == answer


@pytest.mark.parametrize("reply", ["r", "Revise", "[R] Revise", "fix"])
def test_answers_match_by_key_label_or_target(reply: str) -> None:
    result = Harness(interviewer=CallbackInterviewer(lambda q: Answer(reply))).run(GATE)
    assert "fix" in result.completed_nodes


def test_auto_approve_picks_the_first_choice() -> None:
    assert "ship" in Harness(interviewer=AutoApproveInterviewer()).run(GATE).completed_nodes


def test_skipping_fails_the_gate() -> None:
    result = Harness(interviewer=QueueInterviewer()).run(GATE)
    assert result.status is RunStatus.FAIL
    assert result.node_outcomes["review"].failure_reason == "human skipped interaction"


def test_an_answer_naming_no_choice_fails_instead_of_guessing() -> None:
    result = Harness(interviewer=CallbackInterviewer(lambda q: Answer("maybe"))).run(GATE)
    assert result.status is RunStatus.FAIL
    assert "'maybe' matches none of the choices" in result.node_outcomes["review"].failure_reason


def timed_gate(extra: str) -> Graph:
    return graph(
        f"""
        digraph p {{
            start [shape=Mdiamond]; done [shape=Msquare]
            review [shape=hexagon, {extra}]
            ship; fix
            start -> review
            review -> ship [label="[A] Approve"]
            review -> fix [label="[R] Revise"]
            ship -> done
            fix -> done
        }}
        """
    )


def test_timeout_uses_the_default_choice() -> None:
    asked: list[Question] = []

    def times_out(question: Question) -> Answer:
        asked.append(question)
        return Answer.timeout()

    harness = Harness(interviewer=CallbackInterviewer(times_out))
    result = harness.run(timed_gate('human.timeout="2m", human.default_choice="fix"'))
    assert asked[0].timeout_seconds == 120
    assert "fix" in result.completed_nodes
    assert harness.log.of(InterviewTimeout)[0].stage == "review"


def test_timeout_without_default_asks_for_a_retry() -> None:
    interviewer = QueueInterviewer([Answer.timeout(), Answer("A")])
    result = Harness(interviewer=interviewer).run(timed_gate('max_retries=1, timeout="30s"'))
    assert result.status is RunStatus.SUCCESS and "ship" in result.completed_nodes
    once = Harness(interviewer=QueueInterviewer([Answer.timeout()])).run(timed_gate(""))
    assert once.node_outcomes["review"].failure_reason.startswith("max retries exceeded")
    assert "human gate timeout, no default" in once.node_outcomes["review"].failure_reason


def test_gate_without_interviewer_or_edges_fails_clearly() -> None:
    result = Harness().run(GATE)
    assert "no interviewer is configured" in result.node_outcomes["review"].failure_reason
    lonely = graph('digraph p { start [shape=Mdiamond]; g [shape=hexagon]; start -> g }')
    result = Harness(interviewer=AutoApproveInterviewer()).run(lonely)
    assert result.node_outcomes["g"].failure_reason == "No outgoing edges for human gate"


def test_choice_keys_are_unique() -> None:
    gate = graph('digraph p { g [shape=hexagon]; g -> a [label="Yes"]; g -> b [label="Yolo"]; g -> c [label="yy"] }')
    assert [(c.key, c.target) for c in gate_choices(gate.nodes["g"], gate)] == [("Y", "a"), ("O", "b"), ("3", "c")]


def test_interview_started_event_carries_the_question() -> None:
    harness = Harness(interviewer=AutoApproveInterviewer())
    harness.run(GATE)
    started = harness.log.of(InterviewStarted)[0]
    assert started.question.metadata["targets"] == {"A": "ship", "R": "fix"}


# codergen


def test_backend_outcomes_are_used_and_recorded() -> None:
    backend = ScriptedCodergenBackend({"a": Outcome(StageStatus.SUCCESS, notes="did it", preferred_label="x")})
    harness = Harness(backend=backend)
    result = harness.run(graph('digraph p { start [shape=Mdiamond]; a; done [shape=Msquare]; start -> a -> done }'))
    assert result.node_outcomes["a"].notes == "did it"
    assert result.context["last_stage"] == "a"
    assert harness.directory().read_stage_file("a", "response.md") == "did it"


def test_text_responses_become_success_with_a_truncated_last_response() -> None:
    backend = ScriptedCodergenBackend({"a": "text:" + "y" * 500})
    result = Harness(backend=backend).run(graph('digraph p { start [shape=Mdiamond]; a; start -> a }'))
    assert result.node_outcomes["a"].notes == "Stage completed: a"
    assert len(result.context["last_response"]) == 200


def test_each_llm_stage_writes_the_context_it_saw_after_fidelity_projection() -> None:
    pipeline = graph(
        """
        digraph p {
            start [shape=Mdiamond]; done [shape=Msquare]
            a; b; c
            start -> a
            a -> b [fidelity="truncate"]
            b -> c [fidelity="full"]
            c -> done
        }
        """
    )
    backend = ScriptedCodergenBackend({"a": Outcome(StageStatus.SUCCESS, context_updates={"big": "Z" * 900, "n": 3})})
    harness = Harness(backend=backend)
    harness.run(pipeline, initial_context={"ticket": "T-1"})
    seen = {node: json.loads(harness.directory().read_stage_file(node, "context.json") or "null") for node in "abc"}
    assert "big" not in seen["a"] and seen["a"]["ticket"] == "T-1"
    assert (seen["b"]["big"], seen["b"]["n"], seen["b"]["last_stage"]) == ("Z" * 500, "3", "a")
    assert (seen["c"]["big"], seen["c"]["n"]) == ("Z" * 900, 3)
    assert not any(key.startswith("internal.") for document in seen.values() for key in document)
    assert harness.directory().read_stage_file("start", "context.json") is None


def test_prompt_falls_back_to_the_label() -> None:
    backend = ScriptedCodergenBackend()
    Harness(backend=backend).run(graph('digraph p { graph [default_fidelity="full"]; start [shape=Mdiamond]; a [label="Do the thing"]; start -> a }'))
    assert backend.calls[0].prompt == "Do the thing"


class Turns:
    def __init__(self) -> None:
        self.made: list[tuple[str, int]] = []

    def factory(self, node: Node, stage: StageRun) -> Any:
        self.made.append((node.id, stage.attempt))
        return lambda turn: None


class TurnBackend:
    def __init__(self) -> None:
        self.callbacks: list[Any] = []

    def run(self, node: Node, prompt: str, context: Context, on_turn: Any = None) -> str:
        self.callbacks.append(on_turn)
        return "ok"


class UpperPrompt:
    def build(self, node: Node, context: Context, graph: Graph, stage: StageRun) -> str:
        return f"{stage.fidelity}:{node.prompt.upper()}"


def test_prompt_builder_and_on_turn_factory_are_injection_points() -> None:
    turns, backend = Turns(), TurnBackend()
    registry = build_registry(backend=backend, prompt_builder=UpperPrompt(), on_turn_factory=turns.factory)
    harness = Harness(registry=registry)
    harness.run(graph('digraph p { start [shape=Mdiamond]; a [prompt="write code"]; start -> a }'))
    assert turns.made == [("a", 1)]
    assert callable(backend.callbacks[0])
    assert harness.directory().read_stage_file("a", "prompt.md") == "compact:WRITE CODE"


def test_custom_handlers_by_type_and_replacement() -> None:
    class Fixed:
        def __init__(self, note: str) -> None:
            self.note = note

        def execute(self, node: Node, context: Context, graph: Graph, stage: StageRun) -> Outcome:
            return Outcome.success(self.note)

    registry = HandlerRegistry(CodergenHandler())
    registry.register("deploy", Fixed("first"))
    registry.register("deploy", Fixed("second"))
    pipeline = graph('digraph p { start [shape=Mdiamond]; d [type="deploy", custom_attr="x"]; start -> d }')
    result = Harness(registry=registry).run(pipeline)
    assert result.node_outcomes["d"].notes == "second"
    assert registry.types == frozenset({"deploy"})
    with pytest.raises(ValueError):
        registry.register(" ", Fixed("x"))


def test_unregistered_types_fall_back_to_shape_then_default() -> None:
    registry = build_registry()
    odd = graph('digraph p { a [type="nope", shape=diamond]; b [type="nope"]; c [shape=weird] }')
    assert type(registry.resolve(odd.nodes["a"])).__name__ == "ConditionalHandler"
    assert registry.resolve(odd.nodes["b"]) is registry.default_handler
    assert registry.resolve(odd.nodes["c"]) is registry.default_handler
