"""Turn records to tagged data and back: every type, older versions, bad data, plain-value checks."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from orchestra_adapters.storage.payload import decode_payload, encode_payload
from orchestra_core.model.outcome import Outcome, StageStatus
from orchestra_core.model.records import (
    CheckpointRecord,
    NodeEvent,
    NodeExecution,
    RepoSnapshot,
    WorkspaceSnapshot,
)
from orchestra_core.model.store_errors import TurnDataError
from orchestra_core.model.turn import AgentTurn, TurnCommit
from orchestra_core.ports.session_store import StoredTurn
from orchestra_core.session.catalog import AGENT_TURN, spec_for_record
from orchestra_core.session.codec import decode_record, encode_record, normalize_turn_data
from orchestra_core.session.schema import STRING, TypeSpec, field_spec
from tests.contracts.session_store.samples import CORE_AGENT_TURN, RECORDS


def _stored(type_id: str, version: int, data: dict) -> StoredTurn:
    return StoredTurn("7", "6", 6, type_id, version, data, None)


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: type(r).__name__)
def test_every_record_round_trips_through_tags_and_msgpack(record: object) -> None:
    encoded = encode_record(record)
    assert encoded.type_id == spec_for_record(record).type_id
    wire = decode_payload(encode_payload(encoded.data))
    assert decode_record(_stored(encoded.type_id, encoded.type_version, wire)) == record


def test_agent_turn_converts_both_ways_with_per_repo_commits() -> None:
    record = CORE_AGENT_TURN
    assert (record.git_sha, record.commit_message) == ("e4f5a6b7", "Add validation")
    assert len(record.commits) == 2
    assert record == CORE_AGENT_TURN


def test_a_v1_agent_turn_reads_with_defaults_and_a_v2_sha_without_commits_is_kept() -> None:
    v1 = {1: "plan", 2: 0, 3: "m", 4: "p"}
    old = decode_record(_stored(AGENT_TURN.type_id, 1, v1))
    assert isinstance(old, AgentTurn) and old.git_sha is None and old.commits == ()
    v2 = decode_record(_stored(AGENT_TURN.type_id, 2, {**v1, 11: "abc", 12: "msg"}))
    assert isinstance(v2, AgentTurn)
    assert v2.commits == (TurnCommit("", "abc", "msg"),)


def test_unknown_tags_from_newer_versions_are_ignored() -> None:
    data = {**encode_record(RECORDS[2]).data, 29: "future field"}
    assert decode_record(_stored("dev.orchestra.NodeExecution", 9, data)) == RECORDS[2]


def test_types_orchestra_does_not_define_decode_to_none() -> None:
    assert decode_record(_stored("cxdb.ConversationItem", 3, {1: "x"})) is None


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({1: 5, 2: 0}, "node_id"),
        ({1: "a", 2: 99}, "event"),
        ({1: "a", 2: 0, 4: -1}, "attempt"),
        ({1: "a", 2: 0, 4: True}, "attempt"),
        ({1: "a", 2: 0, 4: 1.5}, "attempt"),
        ({1: "a", 2: 0, 6: "slow"}, "duration_s"),
        ({1: "a", 2: 0, 5: "not a map"}, "outcome"),
        ({2: 0}, "node_id"),
    ],
)
def test_data_that_does_not_fit_the_type_names_the_field(data: dict, field: str) -> None:
    with pytest.raises(TurnDataError, match=field):
        decode_record(_stored("dev.orchestra.NodeExecution", 1, data))


def test_a_bad_value_is_named_by_its_turn_type_and_field() -> None:
    with pytest.raises(TurnDataError, match=r"^turn 7 \(dev\.orchestra\.NodeExecution v1\)\.attempt: stored str"):
        decode_record(_stored("dev.orchestra.NodeExecution", 1, {1: "a", 2: 0, 4: "two"}))


def test_encoding_a_bad_value_names_the_field() -> None:
    with pytest.raises(TurnDataError, match=r"dev\.orchestra\.NodeExecution\.attempt"):
        encode_record(NodeExecution("a", NodeEvent.STARTED, attempt="two"))  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        encode_record(object())


def test_type_specs_refuse_reserved_duplicate_and_unknown_fields() -> None:
    with pytest.raises(ValueError, match="reserved"):
        TypeSpec("x", 1, NodeExecution, [field_spec(30, "node_id", STRING)])
    with pytest.raises(ValueError, match="duplicate"):
        TypeSpec(
            "x", 1, NodeExecution, [field_spec(1, "node_id", STRING), field_spec(1, "handler_type", STRING)]
        )
    with pytest.raises(ValueError, match="not a field"):
        TypeSpec("x", 1, NodeExecution, [field_spec(1, "nope", STRING)])


_plain = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False)
    | st.text()
    | st.binary(),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.text(max_size=5) | st.integers(0, 1000), children, max_size=4)
    ),
    max_leaves=12,
)


@given(st.dictionaries(st.integers(0, 29), _plain, max_size=6))
def test_plain_data_survives_normalizing_and_msgpack(data: dict) -> None:
    normalized = normalize_turn_data(data)
    assert normalized == data or any(isinstance(v, tuple) for v in data.values())
    assert decode_payload(encode_payload(normalized)) == normalized


@given(st.sampled_from([object(), {1, 2}, 2**64, -(2**63) - 1, (1, object())]))
def test_values_msgpack_cannot_hold_are_refused(value: object) -> None:
    with pytest.raises(TurnDataError):
        normalize_turn_data({1: value})


_names = st.text(min_size=1, max_size=12)
_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=False)
    | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=8,
)
_outcomes = st.builds(
    Outcome,
    status=st.sampled_from(list(StageStatus)),
    preferred_label=st.text(max_size=8),
    suggested_next_ids=st.lists(_names, max_size=3).map(tuple),
    context_updates=st.dictionaries(_names, _json, max_size=3),
    notes=st.text(max_size=20),
    failure_reason=st.text(max_size=20),
)
_checkpoints = st.builds(
    CheckpointRecord,
    current_node=_names,
    completed_nodes=st.lists(_names, max_size=5).map(tuple),
    context_snapshot=st.dictionaries(_names, _json, max_size=4),
    retry_counters=st.dictionaries(_names, st.integers(0, 50), max_size=3),
    agent_turn_number=st.none() | st.integers(0, 1000),
    node_outcomes=st.dictionaries(_names, _outcomes, max_size=3),
    logs=st.lists(st.text(max_size=20), max_size=3).map(tuple),
    next_node=st.none() | _names,
    run_status=st.sampled_from(["running", "success", "fail"]),
    node_visits=st.integers(0, 10_000),
    workspace_snapshot=st.none()
    | st.builds(
        WorkspaceSnapshot, st.lists(st.builds(RepoSnapshot, _names, _names, _names), max_size=2).map(tuple)
    ),
)


@given(_checkpoints)
def test_any_checkpoint_round_trips(checkpoint: CheckpointRecord) -> None:
    encoded = encode_record(checkpoint)
    wire = decode_payload(encode_payload(encoded.data))
    assert decode_record(_stored(encoded.type_id, encoded.type_version, wire)) == checkpoint
