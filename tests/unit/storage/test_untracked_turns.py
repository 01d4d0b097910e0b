"""AgentTurn v3's `untracked` flag and the UntrackedWritesCommitted turn: stored, read back, old records still read."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from orchestra_adapters.storage.payload import decode_payload, encode_payload
from orchestra_core.model.turn import AgentTurn, TurnCommit
from orchestra_core.model.workspace_events import UntrackedWritesCommitted
from orchestra_core.ports.session_store import StoredTurn
from orchestra_core.session.catalog import AGENT_TURN, RETIRED_TYPE_IDS, UNTRACKED_WRITES_COMMITTED
from orchestra_core.session.codec import decode_record, encode_record
from orchestra_core.session.turn_view import TurnView


def _stored(type_id: str, version: int, data: dict) -> StoredTurn:
    return StoredTurn("7", "6", 6, type_id, version, data, None)


def _round_trip(record: object) -> object:
    encoded = encode_record(record)
    wire = decode_payload(encode_payload(encoded.data))
    return decode_record(_stored(encoded.type_id, encoded.type_version, wire))


def test_agent_turn_has_untracked_as_tag_14_since_version_3() -> None:
    assert AGENT_TURN.version >= 3
    [untracked] = [f for f in AGENT_TURN.fields if f.name == "untracked"]
    assert (untracked.tag, untracked.kind, untracked.since) == (14, "bool", 3)
    assert UNTRACKED_WRITES_COMMITTED.type_id not in RETIRED_TYPE_IDS


def test_v1_and_v2_agent_turns_read_as_tracked() -> None:
    v1 = {1: "plan", 2: 0, 3: "m", 4: "p"}
    for version, data in ((1, v1), (2, {**v1, 11: "abc", 12: "msg"})):
        record = decode_record(_stored(AGENT_TURN.type_id, version, data))
        assert isinstance(record, AgentTurn) and record.untracked is False


def test_an_untracked_turn_round_trips_and_says_so_in_its_view() -> None:
    turn = AgentTurn(
        "implement", 5, "sonnet", "claude-code", files_written=("app:out.txt",),
        commits=(TurnCommit("app", "abc123", "Add out.txt", "orchestra/p/1"),), untracked=True,
    )
    assert _round_trip(turn) == turn
    assert encode_record(turn).data[14] is True
    view = TurnView("9", AGENT_TURN.type_id, "s1", None, None, turn)
    assert view.to_json()["untracked"] is True
    tracked = TurnView("9", AGENT_TURN.type_id, "s1", None, None, AgentTurn("a", 1, "m", "p"))
    assert "untracked" not in tracked.to_json()


def test_the_untracked_writes_event_round_trips_without_its_unstored_fields() -> None:
    event = UntrackedWritesCommitted(
        session_id="s1", repo="app", node_id="implement", turn_number=5, paths=("a.txt", "b/c.py"),
        sha="abc123", branch="orchestra/p/1",
    )
    back = _round_trip(event)
    assert back == UntrackedWritesCommitted(
        repo="app", node_id="implement", turn_number=5, paths=("a.txt", "b/c.py"), sha="abc123",
        branch="orchestra/p/1",
    )
    assert back.level == "warning"  # type: ignore[attr-defined]
    view = TurnView("9", UNTRACKED_WRITES_COMMITTED.type_id, "s1", None, None, back)
    assert view.to_json()["files_written"] == ["app:a.txt", "app:b/c.py"]
    assert view.to_json()["paths"] == ["a.txt", "b/c.py"]


_names = st.text(min_size=1, max_size=10)


@given(
    untracked=st.booleans(),
    number=st.integers(0, 10_000),
    files=st.lists(st.builds(lambda r, p: f"{r}:{p}", _names, _names), max_size=4),
    commits=st.lists(st.builds(TurnCommit, _names, _names, st.text(max_size=20), _names), max_size=2),
)
def test_any_agent_turn_keeps_its_untracked_flag(
    untracked: bool, number: int, files: list[str], commits: list[TurnCommit]
) -> None:
    turn = AgentTurn(
        "n", number, "m", "p", files_written=files, commits=tuple(commits), untracked=untracked
    )
    assert _round_trip(turn) == turn
