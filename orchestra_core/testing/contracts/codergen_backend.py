"""The CodergenBackend contract: a node's reply comes back as its text, turns are reported in order."""

from __future__ import annotations

from collections.abc import Mapping

from orchestra_core.model.context import Context
from orchestra_core.model.graph import Node
from orchestra_core.model.outcome import Outcome, StageStatus
from orchestra_core.model.turn import AgentTurn
from orchestra_core.ports.codergen_backend import CodergenBackend
from orchestra_core.testing.contracts._base import PortContract, requires

REPLIES = {"plan": "The plan: three steps.", "review": "Looks good ✓"}


class CodergenBackendContract(PortContract):
    """A runner implements `make_backend(replies)`. Reporting agent turns through `on_turn` is the
    optional `agent_turns` (a single model call, like the direct backend's, has no turns)."""

    OPTIONAL_CAPABILITIES = frozenset({"agent_turns"})

    def make_backend(self, replies: Mapping[str, str]) -> CodergenBackend:
        """A backend whose model answers each node id of `replies` with its text, without tool calls."""
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
