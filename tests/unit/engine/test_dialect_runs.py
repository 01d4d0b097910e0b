"""Other runners' dialects at run time: decimal weights order edges, join policies other than Orchestra's first
two, goal gates given as conditions, and retry presets named `retry_preset`."""

from __future__ import annotations

import pytest

from orchestra_core.model.checkpoint import RunStatus
from orchestra_core.model.outcome import Outcome, StageStatus
from orchestra_core.testing.backends import ScriptedCodergenBackend
from tests.support.engine import Harness, graph


def route(weights: dict[str, str]) -> list[str]:
    edges = "\n".join(f"a -> {target} [weight={weight}]\n{target} -> done" for target, weight in weights.items())
    pipeline = graph(f"digraph p {{ start [shape=Mdiamond]; done [shape=Msquare]; start -> a\n{edges} }}")
    return list(Harness().run(pipeline).completed_nodes)


@pytest.mark.parametrize(
    ("weights", "taken"),
    [
        ({"low": "1", "high": "1.5"}, "high"),  # a decimal outranks the integer below it
        ({"low": "0", "half": "0.5"}, "half"),
        ({"b": "2.0", "a2": "2"}, "a2"),  # 2.0 is 2: equal weights go to the lexically first target
        ({"big": "10", "small": "9.99"}, "big"),
        ({"neg": "-0.5", "zero": "0"}, "zero"),
    ],
)
def test_decimal_weights_order_edges_as_exact_numbers(weights: dict[str, str], taken: str) -> None:
    assert route(weights)[2] == taken


def fan_out(policy: str, script: dict[str, str]) -> str:
    branches = "\n".join(f"fan -> {name} -> join" for name in script)
    return f"""
    digraph p {{
        start [shape=Mdiamond]; done [shape=Msquare]
        fan [shape=component, {policy}]
        join [shape=tripleoctagon]
        start -> fan
        {branches}
        join -> done
    }}
    """


THREE = {"x": "success", "y": "fail", "z": "success"}


@pytest.mark.parametrize(
    ("policy", "script", "status", "reason"),
    [
        ("join_policy=k_of_n, k=2", THREE, StageStatus.SUCCESS, ""),
        ("join_policy=k_of_n, k=3", THREE, StageStatus.FAIL, "2 of 3 branches succeeded; join_policy=k_of_n, k=3 needs 3"),
        ("join_policy=quorum, quorum_ratio=0.6", THREE, StageStatus.SUCCESS, ""),
        ("join_policy=quorum, quorum_ratio=0.7", THREE, StageStatus.FAIL, "needs 3"),
        ("join_policy=all_success", THREE, StageStatus.FAIL, "join_policy=quorum, quorum_ratio=1 needs 3"),
        ("join_policy=all_success", {"x": "success", "y": "success"}, StageStatus.SUCCESS, ""),
        ("join_policy=any_success", {"x": "fail", "y": "fail", "z": "success"}, StageStatus.SUCCESS, ""),
        ("join_policy=any_success", {"x": "fail", "y": "fail"}, StageStatus.FAIL, "0 of 2 branches succeeded"),
        ("join_policy=quorum, quorum_count=2", THREE, StageStatus.SUCCESS, ""),
        ("join_policy=wait_all", THREE, StageStatus.PARTIAL_SUCCESS, ""),
    ],
)
def test_join_policies_decide_the_fan_out_s_status_after_every_branch_ran(
    policy: str, script: dict[str, str], status: StageStatus, reason: str
) -> None:
    backend = ScriptedCodergenBackend(script)
    result = Harness(backend=backend).run(graph(fan_out(policy, script)))
    outcome = result.node_outcomes["fan"]
    assert outcome.status is status
    assert reason in outcome.failure_reason and bool(reason) == bool(outcome.failure_reason)
    assert all(backend.visits(name) == 1 for name in script)  # k_of_n and quorum cancel no branch
    assert result.status is (RunStatus.FAIL if status is StageStatus.FAIL else RunStatus.SUCCESS)


GATED = """
digraph gated {
    start [shape=Mdiamond]; done [shape=Msquare]
    work [goal_gate="outcome=success && context.tests_passed=true"]
    start -> work -> done
}
"""


def test_a_goal_gate_given_as_a_condition_is_met_when_the_condition_holds() -> None:
    passed = Outcome.success(context_updates={"tests_passed": "true"})
    result = Harness(backend=ScriptedCodergenBackend({"work": passed})).run(graph(GATED))
    assert result.status is RunStatus.SUCCESS, result.failure_reason


@pytest.mark.parametrize(
    "outcome",
    [Outcome.success(context_updates={"tests_passed": "false"}), Outcome(StageStatus.PARTIAL_SUCCESS, context_updates={"tests_passed": "true"})],
)
def test_a_goal_gate_given_as_a_condition_holds_the_run_back_when_it_does_not_hold(outcome: Outcome) -> None:
    result = Harness(backend=ScriptedCodergenBackend({"work": outcome})).run(graph(GATED))
    assert result.status is RunStatus.FAIL
    assert result.failure_reason.startswith(
        "goal gate work is unsatisfied ('outcome=success && context.tests_passed=true' does not hold; "
    )
    assert result.failure_reason.endswith("and has no retry target")


def test_a_condition_gate_sends_the_run_to_its_retry_target_until_the_condition_holds() -> None:
    pipeline = graph(
        """
        digraph gated {
            start [shape=Mdiamond]; done [shape=Msquare]
            fix [prompt="fix it"]
            work [goal_gate="context.tests_passed=true", retry_target=fix]
            start -> work -> done
            fix -> work
        }
        """
    )
    steps = [Outcome.success(context_updates={"tests_passed": "false"}), Outcome.success(context_updates={"tests_passed": "true"})]
    result = Harness(backend=ScriptedCodergenBackend({"work": steps})).run(pipeline)
    assert result.status is RunStatus.SUCCESS, result.failure_reason
    assert result.completed_nodes == ("start", "work", "fix", "work", "done")


@pytest.mark.parametrize(("preset", "attempts"), [("aggressive", 5), ("linear", 3), ("none", 1)])
def test_retry_preset_names_the_spec_s_preset(preset: str, attempts: int) -> None:
    pipeline = graph(
        f'digraph p {{ start [shape=Mdiamond]; done [shape=Msquare]; work [retry_preset={preset}]; start -> work -> done }}'
    )
    backend = ScriptedCodergenBackend({"work": "retry"})
    result = Harness(backend=backend).run(pipeline)
    assert backend.visits("work") == attempts
    assert result.node_outcomes["work"].failure_reason.startswith(f"max retries exceeded ({attempts} of {attempts}")
