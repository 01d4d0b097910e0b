"""Pure routing (3.4, 3.7, fan-out joins) and retry policy (3.5, 3.6) functions."""

from __future__ import annotations

import random

import pytest

from orchestra_core.engine.fan_out import branch_stage_keys, find_join_node
from orchestra_core.engine.retry import PRESETS, BackoffConfig, build_retry_policy, is_retryable
from orchestra_core.engine.routing import (
    Advance,
    Finish,
    Restart,
    exit_transition,
    goal_gate_target,
    next_transition,
    unsatisfied_goal_gate,
)
from orchestra_core.model.checkpoint import RunStatus
from orchestra_core.model.context import Context
from orchestra_core.model.errors import AttributeValueError, OrchestraError
from orchestra_core.model.outcome import Outcome, StageStatus
from tests.support.engine import graph

GATES = graph(
    """
    digraph g {
        graph [retry_target="plan", fallback_retry_target="start"]
        start [shape=Mdiamond]
        plan
        a [goal_gate=true, retry_target="missing", fallback_retry_target="plan"]
        b [goal_gate=true]
        done [shape=Msquare]
        start -> plan -> a -> b -> done
    }
    """
)


def test_goal_gates_accept_success_and_partial_success() -> None:
    outcomes = {"a": Outcome(StageStatus.PARTIAL_SUCCESS), "b": Outcome(StageStatus.SUCCESS)}
    assert unsatisfied_goal_gate(GATES, outcomes, {}) is None
    assert exit_transition(GATES, outcomes, {}) is None


def test_first_unsatisfied_gate_in_visit_order() -> None:
    outcomes = {"plan": Outcome.fail("x"), "b": Outcome.fail("y"), "a": Outcome.fail("z")}
    gate = unsatisfied_goal_gate(GATES, outcomes, {})
    assert gate is not None and gate.id == "b"


def test_retry_target_chain_skips_missing_nodes() -> None:
    assert goal_gate_target(GATES.nodes["a"], GATES) == "plan"  # retry_target missing -> fallback
    assert goal_gate_target(GATES.nodes["b"], GATES) == "plan"  # node has none -> graph's


def test_unsatisfied_gate_without_target_fails() -> None:
    lonely = graph('digraph g { start [shape=Mdiamond]; a [goal_gate=true]; done [shape=Msquare]; start -> a -> done }')
    transition = exit_transition(lonely, {"a": Outcome.fail("nope")}, {})
    assert isinstance(transition, Finish) and transition.status is RunStatus.FAIL
    assert "goal gate a" in transition.reason


ROUTES = graph(
    """
    digraph g {
        start [shape=Mdiamond]
        work [retry_target="fallback"]
        plain
        next; fallback; fixer
        done [shape=Msquare]
        start -> work
        work -> next
        work -> fixer [condition="outcome=fail && context.fixable=true"]
        plain -> next
        next -> again [loop_restart=true]
        again -> done
    }
    """
)


def test_success_follows_edges() -> None:
    transition = next_transition(ROUTES, ROUTES.nodes["work"], Outcome.success(), Context())
    assert transition == Advance("next", ROUTES.outgoing("work")[0], "weight")


def test_failure_takes_a_matching_fail_edge_first() -> None:
    transition = next_transition(ROUTES, ROUTES.nodes["work"], Outcome.fail("x"), Context({"fixable": "true"}))
    assert isinstance(transition, Advance) and transition.target == "fixer"


def test_failure_never_falls_through_then_uses_retry_target() -> None:
    transition = next_transition(ROUTES, ROUTES.nodes["work"], Outcome.fail("x"), Context())
    assert transition == Advance("fallback", None, "retry_target")


def test_failure_without_route_ends_the_run_with_the_reason() -> None:
    transition = next_transition(ROUTES, ROUTES.nodes["plain"], Outcome.fail("disk full"), Context())
    assert isinstance(transition, Finish) and transition.status is RunStatus.FAIL
    assert "plain failed: disk full" in transition.reason


def test_loop_restart_edge() -> None:
    transition = next_transition(ROUTES, ROUTES.nodes["next"], Outcome.success(), Context())
    assert isinstance(transition, Restart) and transition.target == "again"


def test_exit_and_dead_end() -> None:
    assert next_transition(ROUTES, ROUTES.nodes["done"], Outcome.success(), Context()) == Finish(RunStatus.SUCCESS)
    assert next_transition(ROUTES, ROUTES.nodes["fixer"], Outcome.success(), Context()) == Finish(RunStatus.SUCCESS)


FAN = graph(
    """
    digraph g {
        start [shape=Mdiamond]
        fan [shape=component]
        a; b; c; shared; merge [shape=tripleoctagon]; after
        cleanup
        done [shape=Msquare]
        start -> fan
        fan -> a
        fan -> b
        fan -> c
        fan -> cleanup [condition="outcome=fail"]
        a -> shared -> merge
        b -> shared
        c -> merge
        merge -> after -> done
    }
    """
)


def test_join_node_is_the_nearest_fan_in_every_branch_reaches() -> None:
    assert find_join_node(FAN, FAN.nodes["fan"]) == "merge"


def test_join_node_prefers_an_explicit_attribute() -> None:
    explicit = FAN.replace_nodes([FAN.nodes["fan"].with_attrs(fan_in="after")])
    assert find_join_node(explicit, explicit.nodes["fan"]) == "after"


def test_join_node_without_fan_in_type_is_the_nearest_common_node() -> None:
    plain = graph('digraph g { f [shape=component]; f -> a; f -> b; a -> m; b -> x -> m; m -> end }')
    assert find_join_node(plain, plain.nodes["f"]) == "m"
    apart = graph('digraph g { f [shape=component]; f -> a; f -> b }')
    assert find_join_node(apart, apart.nodes["f"]) is None


def test_nodes_two_branches_run_get_branch_stage_keys() -> None:
    keys = branch_stage_keys(FAN, FAN.nodes["fan"], "merge")
    assert keys["a"] == {"shared": "shared@a"}
    assert keys["b"] == {"shared": "shared@b"}
    assert keys["c"] == {}


def test_parallel_continues_at_join_unless_a_conditional_edge_matches() -> None:
    node = FAN.nodes["fan"]
    assert next_transition(FAN, node, Outcome(StageStatus.PARTIAL_SUCCESS), Context()) == Advance("merge", None, "fan_in")
    failed = next_transition(FAN, node, Outcome.fail("no branch succeeded"), Context())
    assert isinstance(failed, Advance) and failed.target == "cleanup"


# retry policy


def policy_graph(graph_attrs: str = "", node_attrs: str = "") -> tuple:
    g = graph(f'digraph g {{ graph [{graph_attrs}]; n [{node_attrs}] }}')
    return g.nodes["n"], g


@pytest.mark.parametrize(
    ("graph_attrs", "node_attrs", "attempts"),
    [
        ("", "", 1),
        ("default_max_retries=2", "", 3),
        ("default_max_retry=1", "", 2),
        ("default_max_retries=2", "max_retries=0", 1),
        ("", "max_retries=3", 4),
        ("", "retry_policy=standard", 5),
        ("", "retry_policy=patient, max_retries=1", 2),
        ("default_retry_policy=linear", "", 3),
        ("default_max_retries=1, default_retry_policy=linear", "", 2),
        ("", "retry_policy=none", 1),
    ],
)
def test_attempts(graph_attrs: str, node_attrs: str, attempts: int) -> None:
    node, g = policy_graph(graph_attrs, node_attrs)
    assert build_retry_policy(node, g).max_attempts == attempts


@pytest.mark.parametrize(
    ("preset", "delays"),
    [
        ("standard", [0.2, 0.4, 0.8, 1.6, 3.2]),
        ("aggressive", [0.5, 1.0, 2.0, 4.0, 8.0]),
        ("linear", [0.5, 0.5, 0.5]),
        ("patient", [2.0, 6.0, 18.0]),
    ],
)
def test_preset_delays_without_jitter(preset: str, delays: list[float]) -> None:
    backoff = PRESETS[preset].backoff
    plain = BackoffConfig(backoff.initial_delay_s, backoff.factor, backoff.max_delay_s, jitter=False)
    assert [plain.delay_for_attempt(n) for n in range(1, len(delays) + 1)] == pytest.approx(delays)


def test_delays_are_capped() -> None:
    assert BackoffConfig(1.0, 10.0, max_delay_s=5.0, jitter=False).delay_for_attempt(4) == 5.0


def test_jitter_stays_within_half_to_one_and_a_half() -> None:
    rng = random.Random(1)
    delays = [BackoffConfig(1.0, 1.0).delay_for_attempt(1, rng) for _ in range(200)]
    assert all(0.5 <= d < 1.5 for d in delays)
    assert len(set(delays)) > 100


def test_node_overrides_backoff() -> None:
    node, g = policy_graph(
        node_attrs='max_retries=2, retry_initial_delay="1s", retry_backoff_factor=3, retry_max_delay="5s", retry_jitter=false'
    )
    backoff = build_retry_policy(node, g).backoff
    assert [backoff.delay_for_attempt(n) for n in (1, 2, 3)] == [1.0, 3.0, 5.0]


def test_unknown_preset_is_a_clear_error() -> None:
    node, g = policy_graph(node_attrs="retry_policy=sometimes")
    with pytest.raises(AttributeValueError, match="retry_policy"):
        build_retry_policy(node, g)


class Flagged(Exception):
    def __init__(self, retryable: bool) -> None:
        super().__init__("flagged")
        self.retryable = retryable


def test_retryable_errors() -> None:
    assert is_retryable(ConnectionError("reset"))
    assert not is_retryable(OrchestraError("bad config"))
    assert not is_retryable(Flagged(False))
    assert is_retryable(Flagged(True))
