"""Branch tasks without a fleet: their payload and result survive JSON, and a worker's task that is no longer wanted
(a bad payload, another task id, a cancelled or taken branch, a busy branch) does nothing and opens nothing."""

from __future__ import annotations

import json

import pytest

from orchestra_core.engine.stage import BranchResult
from orchestra_core.model.outcome import Outcome
from orchestra_core.ports.dispatcher import Task
from orchestra_core.ports.session_locks import SessionBusyError
from orchestra_core.runs.branch_task import run_branch_task
from orchestra_core.runs.fleet_payloads import (
    BadBranchTaskError,
    BranchAssignment,
    BranchOutcome,
    BranchRepo,
    outcome_from_payload,
    result_payload,
)
from orchestra_core.testing.fleet import InMemoryFleetLedger

ASSIGNMENT = BranchAssignment(
    session_id="7", branch="fan:a", line="9", node="fan", edge=0, stop_at="join", stage_keys={"x": "x@a"},
    context={"graph.goal": "g", "numbers": [1, 2], "nested": {"k": None}}, visited=("start", "fan"),
    pipeline_path="p.dot", pipeline_blob="ab" * 32, repos={"project": BranchRepo("b--fan-a", "c0ffee", "file:///r")},
    auto_approve=True, attempt=2, sent_by="w1",
)  # fmt: skip


def test_an_assignment_survives_json() -> None:
    assert BranchAssignment.from_payload(json.loads(json.dumps(ASSIGNMENT.to_payload()))) == ASSIGNMENT


@pytest.mark.parametrize("payload", [{}, {"session_id": "7"}, {**ASSIGNMENT.to_payload(), "edge": "first"}])
def test_a_payload_that_is_not_an_assignment_is_refused(payload: dict[str, object]) -> None:
    with pytest.raises(BadBranchTaskError, match="not a branch task"):
        BranchAssignment.from_payload(payload)


def test_a_result_survives_json() -> None:
    result = BranchResult(
        "a", "partial_success", Outcome.fail("half", notes="n"), "a2", ("a", "a2"),
        {"a": Outcome.success("ok"), "a2": Outcome.fail("half")}, {"score": 0.5, "when": object()}, 1.5,
    )  # fmt: skip
    outcome = outcome_from_payload(json.loads(json.dumps(result_payload(BranchOutcome(result=result, heads={"p": "s"}, worker="w")))))
    assert outcome.heads == {"p": "s"} and outcome.worker == "w"
    back = outcome.result
    assert (back.status, back.last_node, back.completed_nodes, back.duration_s) == ("partial_success", "a2", ("a", "a2"), 1.5)
    assert back.outcome == result.outcome and dict(back.node_outcomes) == dict(result.node_outcomes)
    assert back.context_changes["score"] == 0.5 and isinstance(back.context_changes["when"], str)


def _never(_assignment: BranchAssignment) -> object:
    raise AssertionError("the branch's run was opened")


def test_a_task_nobody_waits_for_does_nothing() -> None:
    ledger = InMemoryFleetLedger()
    task = Task("branch", "7", "q", ASSIGNMENT.to_payload(), "t1")
    assert run_branch_task(Task("branch", "7", "q", {"x": 1}, "t1"), ledger, "w", _never)["outcome"] == "refused"
    assert run_branch_task(task, ledger, "w", _never)["outcome"] == "stale"  # the fleet never had it
    ledger.add_branch("7", "fan:a", "t0", "q", "9")
    assert run_branch_task(task, ledger, "w", _never)["outcome"] == "stale"  # another task's
    ledger.add_branch("7", "fan:a", "t1", "q", "9")
    ledger.cancel_branch("7", "fan:a")
    assert run_branch_task(task, ledger, "w", _never)["outcome"] == "stale"  # withdrawn
    ledger.add_branch("7", "fan:a", "t1", "q", "9")
    ledger.claim_branch("7", "fan:a", "t1", "parent")
    assert run_branch_task(task, ledger, "w", _never)["outcome"] == "stale"  # taken


def test_a_busy_branch_is_left_to_its_runner() -> None:
    ledger = InMemoryFleetLedger()
    ledger.add_branch("7", "fan:a", "t1", "q", "9")

    def busy(_assignment: BranchAssignment) -> object:
        raise SessionBusyError("session 9 is being run by w2")

    said = run_branch_task(Task("branch", "7", "q", ASSIGNMENT.to_payload(), "t1"), ledger, "w", busy)  # type: ignore[arg-type]
    assert said["outcome"] == "busy" and ledger.get_branch("7", "fan:a").state == "queued"  # type: ignore[union-attr]


def test_a_branch_this_worker_cannot_run_is_reported_failed() -> None:
    from orchestra_core.model.errors import OrchestraError

    ledger = InMemoryFleetLedger()
    ledger.add_branch("7", "fan:a", "t1", "q", "9")

    def refuses(_assignment: BranchAssignment) -> object:
        raise OrchestraError("this worker has no workspace repo 'project'")

    said = run_branch_task(Task("branch", "7", "q", ASSIGNMENT.to_payload(), "t1"), ledger, "w3", refuses)  # type: ignore[arg-type]
    entry = ledger.get_branch("7", "fan:a")
    assert said["outcome"] == "refused" and entry is not None and entry.state == "done"
    reported = outcome_from_payload(entry.result).result
    assert reported.status == "fail" and "worker w3: this worker has no workspace repo" in reported.failure_reason
