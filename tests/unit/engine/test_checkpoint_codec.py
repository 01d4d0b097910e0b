"""checkpoint.json encoding: round trips, incremental encoding equals a fresh one, clear errors."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestra_adapters.filesystem.checkpoint_codec import (
    CheckpointEncoder,
    decode_checkpoint,
    decode_manifest,
    encode_manifest,
)
from orchestra_core.model.checkpoint import Checkpoint, OutcomeMap, RunManifest, RunStatus
from orchestra_core.model.outcome import Outcome, StageStatus
from orchestra_core.ports.run_directory import RunDirectoryError

MOMENT = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
NODE_IDS = st.sampled_from(["a", "b", "c", "δ", 'q"uote', "n_1"])
TEXT = st.text(max_size=12)
JSON_SCALARS = st.none() | st.booleans() | st.integers(-(10**9), 10**9) | TEXT
JSON_VALUES = st.recursive(JSON_SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3), max_leaves=8)
OUTCOMES = st.builds(
    Outcome,
    st.sampled_from(list(StageStatus)),
    preferred_label=TEXT,
    suggested_next_ids=st.lists(NODE_IDS, max_size=2).map(tuple),
    notes=TEXT,
    failure_reason=TEXT,
)


def make(outcomes: OutcomeMap, completed: tuple[str, ...], context: dict) -> Checkpoint:
    return Checkpoint(
        current_node=completed[-1] if completed else "",
        completed_nodes=completed,
        node_outcomes=outcomes,
        node_retries={},
        context=context,
        timestamp=MOMENT,
        next_node=None,
    )


def routing_view(checkpoint: Checkpoint) -> dict:
    return {
        node: (o.status, o.preferred_label, o.suggested_next_ids, o.notes, o.failure_reason)
        for node, o in checkpoint.node_outcomes.items()
    }


STEPS = st.lists(st.one_of(st.tuples(st.just("set"), NODE_IDS, OUTCOMES), st.tuples(st.just("reset"))), max_size=25)


@settings(max_examples=150)
@given(STEPS, st.dictionaries(TEXT, JSON_VALUES, max_size=4))
def test_incremental_encoding_equals_fresh_encoding_and_round_trips(steps: list, context: dict) -> None:
    encoder = CheckpointEncoder()
    outcomes = OutcomeMap()
    completed: tuple[str, ...] = ()
    for step in steps:
        if step[0] == "reset":
            outcomes, completed = OutcomeMap(), ()
        else:
            _, node, outcome = step
            outcomes = outcomes.with_outcome(node, outcome)
            completed = (*completed, node)
        checkpoint = make(outcomes, completed, context)
        text = encoder.encode(checkpoint)
        assert text == CheckpointEncoder().encode(checkpoint)
        decoded = decode_checkpoint(text, "checkpoint.json")
        assert routing_view(decoded) == routing_view(checkpoint)
        assert decoded.completed_nodes == completed
        assert dict(decoded.context) == context


def test_document_shape_matches_design_md() -> None:
    outcomes = OutcomeMap().with_outcome("plan", Outcome.success("ok")).with_outcome("gate", Outcome(StageStatus.FAIL, failure_reason="no"))
    checkpoint = Checkpoint(
        "gate", ("plan", "gate"), outcomes, {"gate": 1}, {"k": "v"}, MOMENT, next_node=None,
        status=RunStatus.FAIL, failure_reason="no", workspace_snapshot={"repo": "abc"},
    )
    document = json.loads(CheckpointEncoder().encode(checkpoint))
    assert document["node_outcomes"] == {
        "plan": {"status": "success", "notes": "ok"},
        "gate": {"status": "fail", "notes": "", "failure_reason": "no"},
    }
    assert "outcome_details" not in document
    for key in ("current_node", "completed_nodes", "node_retries", "context", "workspace_snapshot"):
        assert key in document
    assert document["timestamp"] == "2026-01-02T03:04:05+00:00"


def test_label_and_suggested_ids_are_in_the_node_outcome_only_when_set() -> None:
    gate = Outcome(StageStatus.PARTIAL_SUCCESS, preferred_label="Yes", suggested_next_ids=("ship",))
    checkpoint = make(OutcomeMap().with_outcome("gate", gate).with_outcome("plan", Outcome.success()), ("gate", "plan"), {})
    outcomes = json.loads(CheckpointEncoder().encode(checkpoint))["node_outcomes"]
    assert outcomes["gate"] == {
        "status": "partial_success", "notes": "", "preferred_label": "Yes", "suggested_next_ids": ["ship"]
    }
    assert set(outcomes["plan"]) == {"status", "notes"}


def test_format_1_checkpoints_with_outcome_details_are_still_read() -> None:
    text = json.dumps({
        "format": 1, "timestamp": "2026-01-01T00:00:00+00:00", "status": "running", "current_node": "gate",
        "next_node": "ship", "completed_nodes": ["plan", "gate"], "context": {"k": 1},
        "node_outcomes": {"plan": "success", "gate": "fail"},
        "outcome_details": {"plan": {"notes": "ok"}, "gate": {"failure_reason": "no", "preferred_label": "Retry"}},
    })
    decoded = decode_checkpoint(text, "old/checkpoint.json")
    assert routing_view(decoded) == {
        "plan": (StageStatus.SUCCESS, "", (), "ok", ""),
        "gate": (StageStatus.FAIL, "Retry", (), "", "no"),
    }


def test_manifest_names_the_graph_and_its_start_time_and_reads_format_1() -> None:
    manifest = RunManifest("s-1", "pipe", "the goal", "The Label", None, "/logs", MOMENT, {"k": "v"})
    document = json.loads(encode_manifest(manifest))
    assert (document["name"], document["goal"], document["label"], document["start_time"]) == (
        "pipe", "the goal", "The Label", "2026-01-02T03:04:05+00:00"
    )
    assert decode_manifest(json.dumps(document), "manifest.json") == manifest
    old = {"format": 1, "session_id": "s-1", "pipeline": "pipe", "goal": "the goal", "label": "The Label",
           "source_path": None, "logs_root": "/logs", "started_at": MOMENT.isoformat(), "initial_context": {"k": "v"}}
    assert decode_manifest(json.dumps(old), "manifest.json") == manifest


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("not json", "not valid JSON"),
        ("[]", "expected a JSON object"),
        ('{"current_node": "a"}', "missing key 'node_outcomes'"),
        ('{"current_node": 1, "node_outcomes": {}, "completed_nodes": [], "context": {}, "timestamp": "2026-01-01T00:00:00"}', "'current_node' must be a string"),
        ('{"current_node": "a", "node_outcomes": {"a": "great"}, "completed_nodes": [], "context": {}, "timestamp": "2026-01-01T00:00:00"}', "great"),
        ('{"current_node": "a", "node_outcomes": {"a": {"notes": ""}}, "completed_nodes": [], "context": {}, "timestamp": "2026-01-01T00:00:00"}', "outcome status None"),
    ],
)
def test_malformed_checkpoints_name_the_file_and_the_problem(text: str, problem: str) -> None:
    with pytest.raises(RunDirectoryError, match=r"run/checkpoint\.json") as caught:
        decode_checkpoint(text, "run/checkpoint.json")
    assert problem in str(caught.value)


def test_encoding_after_many_nodes_re_encodes_only_the_outcomes_set_since(monkeypatch: pytest.MonkeyPatch) -> None:
    # The writer encodes a checkpoint now and then; the maps of the nodes in between are gone by then.
    import orchestra_adapters.filesystem.checkpoint_codec as codec

    encoder = CheckpointEncoder()
    outcomes = OutcomeMap()
    for number in range(2000):
        outcomes = outcomes.with_outcome(f"n{number}", Outcome.success(f"node {number}"))
    encoder.encode(make(outcomes, (), {}))
    for number in range(2000, 2300):  # 300 nodes, none of whose maps is kept
        outcomes = outcomes.with_outcome(f"n{number}", Outcome.success(f"node {number}"))
    documents = []
    original = codec._outcome_document
    monkeypatch.setattr(codec, "_outcome_document", lambda outcome: documents.append(outcome) or original(outcome))
    text = encoder.encode(make(outcomes, (), {}))
    assert len(documents) == 300
    assert text == CheckpointEncoder().encode(make(outcomes, (), {}))
