"""The SessionStore contract's optional `totals` capability (`SessionTotalsReader`): running totals per turn."""

from __future__ import annotations

from orchestra_core.model.records import (
    CheckpointRecord,
    LifecycleEvent,
    NodeEvent,
    NodeExecution,
    ParallelEvent,
    ParallelExecution,
    PipelineLifecycle,
)
from orchestra_core.model.store_errors import SessionNotFoundError
from orchestra_core.model.turn import AgentTurn, TokenUsage
from orchestra_core.model.workspace_events import (
    RemotePushed,
    SessionBranchCreated,
    SessionCleanedUp,
    SessionRolledBack,
)
from orchestra_core.ports.session_store import (
    SessionMetadata,
    SessionStore,
    SessionTotals,
    SessionTotalsReader,
)
from orchestra_core.session import api
from orchestra_core.session.codec import encode_record
from orchestra_core.testing.contracts._base import raises, requires

TOTALS = "totals"


def _agent_turn(node: str, prompt: int, completion: int, cost: float | None = 0.0) -> AgentTurn:
    return AgentTurn(
        node_id=node, turn_number=1, model="m", provider="p", token_usage=TokenUsage(prompt, completion), cost_usd=cost
    )


class SessionTotalsContract:
    """Tests of the `totals` capability, mixed into the SessionStore contract."""

    store: SessionStore

    def _totals(self) -> SessionTotalsReader:
        assert isinstance(self.store, SessionTotalsReader)
        return self.store

    def _record(self, session_id: str, *records: object) -> list[str]:
        return [api.append_record(self.store, session_id, record).turn_id for record in records]

    @requires(TOTALS)
    def test_totals_count_what_each_turn_adds(self) -> None:
        session = self.store.create_session(SessionMetadata(pipeline="totals")).session_id
        assert self._totals().session_totals(session) == SessionTotals()
        started = PipelineLifecycle(LifecycleEvent.STARTED, "totals")
        turns = self._record(
            session,
            started,
            NodeExecution("plan", NodeEvent.STARTED, "codergen"),
            _agent_turn("plan", 100, 7, 0.25),
            _agent_turn("plan", 50, 3, None),  # its model had no price: its cost is unknown
            _agent_turn("tool", 0, 0, None),  # used no tokens: cost nothing
            NodeExecution("plan", NodeEvent.RETRYING, "codergen", attempt=2),
            NodeExecution("plan", NodeEvent.COMPLETED, "codergen", attempt=2),
            CheckpointRecord("plan", ("plan",)),
            ParallelExecution("fan", ParallelEvent.FAN_OUT, branch_count=2),
            SessionBranchCreated(repo="app", branch="b", base_sha="b" * 40, base_ref="main"),
            RemotePushed(repo="app", branch="b", sha="a" * 40),
            SessionRolledBack(repo="app", branch="b", head_sha="a" * 40, base_sha="b" * 40),
            SessionCleanedUp(repo="app", branch="b", head_sha="a" * 40, reason="merged"),
        )
        assert self._totals().session_totals(session) == SessionTotals(
            agent_turns=3, prompt_tokens=150, completion_tokens=10, node_runs=1, checkpoints=1, pushes=1,
            rollbacks=1, cleanups=1, parallel=1, session_branches=1, cost_nanos=250_000_000, unpriced_turns=1,
            lifecycle_turn_id=turns[0],
        )  # fmt: skip
        ended = self._record(session, PipelineLifecycle(LifecycleEvent.COMPLETED, "totals"))[0]
        assert self._totals().session_totals(session).lifecycle_turn_id == ended

    @requires(TOTALS)
    def test_forks_inherit_totals_and_tell_their_own(self) -> None:
        session = self.store.create_session(SessionMetadata(pipeline="totals")).session_id
        (fork_point,) = self._record(session, _agent_turn("a", 10, 1, 0.5))
        self._record(session, _agent_turn("a", 20, 2, 2.0))  # after the fork point: not in the fork's history
        fork = self.store.fork_session(
            fork_point, SessionMetadata(pipeline="totals", parent_session_id=session, spawn_reason="replay")
        ).session_id
        self._record(fork, _agent_turn("b", 1, 1, 0.125), NodeExecution("b", NodeEvent.STARTED, "codergen"))
        reader = self._totals()
        assert reader.session_totals(fork) == SessionTotals(
            agent_turns=2, prompt_tokens=11, completion_tokens=2, node_runs=1, cost_nanos=625_000_000
        )
        assert reader.session_totals(fork, own=True) == SessionTotals(
            agent_turns=1, prompt_tokens=1, completion_tokens=1, node_runs=1, cost_nanos=125_000_000
        )
        assert reader.session_totals(session, own=True) == reader.session_totals(session)
        assert (reader.fork_point(fork), reader.fork_point(session)) == (fork_point, None)
        assert [info.session_id for info in reader.child_sessions(session)] == [fork]
        assert reader.child_sessions(fork) == []

    @requires(TOTALS)
    def test_an_explicit_parent_append_starts_from_the_parents_totals(self) -> None:
        session = self.store.create_session(SessionMetadata(pipeline="totals")).session_id
        first, _ = self._record(session, _agent_turn("a", 10, 1), _agent_turn("a", 20, 2))
        encoded = encode_record(_agent_turn("a", 5, 5))
        self.store.append(session, encoded.type_id, encoded.type_version, encoded.data, parent_turn_id=first)
        assert self._totals().session_totals(session) == SessionTotals(
            agent_turns=2, prompt_tokens=15, completion_tokens=6
        )

    @requires(TOTALS)
    def test_totals_of_an_unknown_session_raise(self) -> None:
        with raises(SessionNotFoundError):
            self._totals().session_totals("987654321")
        with raises(SessionNotFoundError):
            self._totals().child_sessions("987654321")
        with raises(SessionNotFoundError):
            self._totals().fork_point("987654321")
