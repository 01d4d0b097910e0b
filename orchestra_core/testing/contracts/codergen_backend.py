"""The CodergenBackend contract: a node's reply comes back as its text, turns are reported in order."""

from __future__ import annotations

from collections.abc import Mapping

from orchestra_core.model.activity import ACTIVITY_KINDS, TEXT, Activity
from orchestra_core.model.context import Context
from orchestra_core.model.failover import ModelFailover
from orchestra_core.model.graph import Node
from orchestra_core.model.outcome import Outcome, StageStatus
from orchestra_core.model.turn import AgentTurn
from orchestra_core.ports.codergen_backend import CodergenBackend
from orchestra_core.testing.contracts._base import PortContract, requires

REPLIES = {"plan": "The plan: three steps.", "review": "Looks good ✓"}


class CodergenBackendContract(PortContract):
    """A runner implements `make_backend(replies)`. Reporting agent turns through `on_turn` is the
    optional `agent_turns` (a single model call, like the direct backend's, has no turns); going on with a
    fallback model (the `on_failover` keyword) is the optional `failover`, with `make_failover_backend`; telling
    what the agent does as it happens (the `on_activity` keyword) is the optional `live_activity`."""

    OPTIONAL_CAPABILITIES = frozenset({"agent_turns", "failover", "live_activity"})

    def make_backend(self, replies: Mapping[str, str]) -> CodergenBackend:
        """A backend whose model answers each node id of `replies` with its text, without tool calls."""
        raise NotImplementedError

    def make_failover_backend(self, replies: Mapping[str, str]) -> CodergenBackend:
        """A backend whose nodes' model has used up its credit (every call fails so) and falls back to a model of
        another provider that answers each node id of `replies` with its text (capability `failover`)."""
        raise NotImplementedError

    def test_is_a_codergen_backend(self) -> None:
        assert isinstance(self.make_backend(REPLIES), CodergenBackend)

    def test_each_node_gets_its_reply(self) -> None:
        backend = self.make_backend(REPLIES)
        for node_id, reply in REPLIES.items():
            result = backend.run(Node(node_id), f"Do {node_id}.", Context())
            if isinstance(result, Outcome):
                assert result.status is StageStatus.SUCCESS and reply in result.notes
            else:
                assert result == reply

    @requires("agent_turns")
    def test_turns_are_reported_in_order_for_the_node(self) -> None:
        turns: list[AgentTurn] = []
        self.make_backend(REPLIES).run(Node("plan"), "Do plan.", Context(), turns.append)
        numbers = [turn.turn_number for turn in turns]
        assert turns and all(turn.node_id == "plan" for turn in turns)
        assert numbers == list(range(numbers[0], numbers[0] + len(numbers)))

    @requires("failover")
    def test_a_model_out_of_credit_gives_way_to_its_fallback_and_says_so(self) -> None:
        heard: list[ModelFailover] = []
        backend = self.make_failover_backend(REPLIES)
        result = backend.run(Node("review"), "Do review.", Context(), on_failover=heard.append)
        text = result.notes if isinstance(result, Outcome) else result
        assert REPLIES["review"] in text
        [failover] = heard
        assert (failover.node_id, failover.cause) == ("review", "credit")
        assert (failover.from_provider, failover.from_model) != (failover.to_provider, failover.to_model)

    @requires("failover")
    def test_turns_after_a_failover_name_the_model_that_answered(self) -> None:
        self.require("agent_turns")
        heard: list[ModelFailover] = []
        turns: list[AgentTurn] = []
        backend = self.make_failover_backend(REPLIES)
        backend.run(Node("plan"), "Do plan.", Context(), turns.append, on_failover=heard.append)
        assert turns and heard
        assert {(t.provider, t.model, t.requested_model) for t in turns} == {
            (heard[0].to_provider, heard[0].to_model, heard[0].from_model)
        }
        assert all(t.fallback_reason for t in turns)


    @requires("live_activity")
    def test_the_agents_reply_is_told_as_live_activity_before_the_run_returns(self) -> None:
        heard: list[Activity] = []
        backend = self.make_backend(REPLIES)
        result = backend.run(Node("review"), "Do review.", Context(), on_activity=heard.append)
        assert result == REPLIES["review"] or (isinstance(result, Outcome) and REPLIES["review"] in result.notes)
        assert heard and all(activity.kind in ACTIVITY_KINDS for activity in heard)
        assert "".join(a.text for a in heard if a.kind == TEXT) == REPLIES["review"]
