"""A freeform human gate (one unlabelled outgoing edge): text in, prompt.md and response.md out (4.6, 6.2)."""

from __future__ import annotations

from orchestra_core.graph import Graph
from orchestra_core.handlers.human import is_freeform
from orchestra_core.interview import (
    Answer,
    AutoApproveInterviewer,
    CallbackInterviewer,
    QueueInterviewer,
    RecordingInterviewer,
    StageAnswersInterviewer,
)
from orchestra_core.model.checkpoint import RunStatus
from orchestra_core.model.interview import QuestionType
from tests.support.engine import Harness, graph

FREE = graph(
    """
    digraph p {
        graph [goal="a release note"]
        start [shape=Mdiamond]; done [shape=Msquare]
        ask [shape=hexagon, prompt="What should the note say about $goal?"]
        write
        start -> ask -> write -> done
    }
    """
)


def stage_file(harness: Harness, name: str) -> str | None:
    return harness.directory().files.get(("ask", name))


def test_only_a_single_unlabelled_edge_makes_a_gate_freeform() -> None:
    def gate(edges: str) -> bool:
        pipeline: Graph = graph(f"digraph p {{ g [shape=hexagon]; a; b; {edges} }}")
        return is_freeform(pipeline.nodes["g"], pipeline)

    assert gate("g -> a")
    assert not gate('g -> a [label="[C] Continue"]')
    assert not gate("g -> a; g -> b")  # Orchestra's choice between the targets stays


def test_the_freeform_answer_is_the_response_and_the_gate_goes_on_along_its_edge() -> None:
    recording = RecordingInterviewer(
        CallbackInterviewer(lambda q: Answer("mention the new cache", text="mention the new cache"))
    )
    harness = Harness(interviewer=recording)
    result = harness.run(FREE)
    assert result.status is RunStatus.SUCCESS, result.failure_reason
    assert result.completed_nodes == ("start", "ask", "write", "done")
    question = recording.recordings[0][0]
    assert (question.type, question.options) == (QuestionType.FREEFORM, ())
    assert stage_file(harness, "prompt.md") == "What should the note say about a release note?"
    assert stage_file(harness, "response.md") == "mention the new cache"
    assert result.context["human.gate.text"] == "mention the new cache"
    assert (result.context["human.gate.selected"], result.context["human.gate.label"]) == ("W", "write")


def test_auto_approve_answers_a_freeform_gate() -> None:
    harness = Harness(interviewer=AutoApproveInterviewer())
    result = harness.run(FREE)
    assert result.status is RunStatus.SUCCESS
    assert stage_file(harness, "response.md") == "auto-approved"


def test_an_answers_file_gives_the_text_of_a_freeform_gate() -> None:
    harness = Harness(interviewer=StageAnswersInterviewer({"ask": ["say it is faster"]}))
    result = harness.run(FREE)
    assert result.status is RunStatus.SUCCESS
    assert stage_file(harness, "response.md") == "say it is faster"


def test_a_freeform_timeout_answers_with_the_default_or_asks_for_a_retry() -> None:
    timed = graph(
        """
        digraph p {
            start [shape=Mdiamond]; done [shape=Msquare]
            ask [shape=hexagon, label="Anything to add?", human.timeout="1m", human.default_choice="nothing"]
            start -> ask -> done
        }
        """
    )
    harness = Harness(interviewer=QueueInterviewer([Answer.timeout()]))
    result = harness.run(timed)
    assert result.status is RunStatus.SUCCESS
    assert stage_file(harness, "response.md") == "nothing"
    bare = Harness(interviewer=QueueInterviewer([Answer.timeout()])).run(FREE)
    assert "human gate timeout, no default" in bare.node_outcomes["ask"].failure_reason


def test_skipping_a_freeform_gate_fails_it() -> None:
    result = Harness(interviewer=QueueInterviewer()).run(FREE)
    assert result.status is RunStatus.FAIL
    assert result.node_outcomes["ask"].failure_reason == "human skipped interaction"
