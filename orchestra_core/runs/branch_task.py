"""What a worker does with a branch task: decide by the ledger and the branch's lock whether it is still wanted and
free, run it (`BranchRun`) while watching for a cancel, and leave its result in the ledger for the session's runner.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import suppress
from typing import Any

from attrs import evolve

from orchestra_core.engine.stage import BranchResult
from orchestra_core.model.cancellation import Cancellation
from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.outcome import Outcome, StageStatus
from orchestra_core.ports.dispatcher import Task
from orchestra_core.ports.fleet import FleetLedger
from orchestra_core.ports.session_locks import SessionBusyError
from orchestra_core.runs.branch_run import BranchRun
from orchestra_core.runs.fleet_payloads import (
    BadBranchTaskError,
    BranchAssignment,
    BranchOutcome,
    result_payload,
)

OpenBranchRun = Callable[[BranchAssignment], BranchRun]
CANCEL_POLL_S = 0.5


def run_branch_task(
    task: Task, ledger: FleetLedger, worker: str, open_run: OpenBranchRun, *, poll_s: float = CANCEL_POLL_S
) -> dict[str, Any]:
    """Run one branch task on this worker; what happened, as plain JSON (the task's result).

    The task does nothing when its entry names another task (the fan-out ran again, or the branch was sent again
    after a lost worker), is no longer queued, or was cancelled; or when another runner holds the branch's lock.
    Otherwise it takes the lock, then the entry (compare-and-set), runs the branch and reports. A branch that
    cannot run here (a repo this worker lacks, a bad payload) is reported failed, so its session's runner does not
    wait for it.
    """
    try:
        assignment = BranchAssignment.from_payload(task.payload)
    except BadBranchTaskError as error:
        return _said("refused", str(error))
    session, branch = assignment.session_id, assignment.branch
    entry = ledger.get_branch(session, branch)
    if entry is None or entry.task_id != task.task_id or entry.state != "queued" or entry.cancel_requested:
        return _said("stale", "the branch is no longer waiting for this task")
    try:
        run = open_run(assignment)  # takes the branch session's lock
    except SessionBusyError as busy:
        return _said("busy", str(busy))
    except OrchestraError as error:
        if ledger.claim_branch(session, branch, task.task_id, worker) is not None:
            refused = BranchOutcome(result=failed_branch(assignment, f"worker {worker}: {error}"), worker=worker)
            ledger.finish_branch(session, branch, task.task_id, result_payload(refused))
        return _said("refused", str(error))
    try:
        if ledger.claim_branch(session, branch, task.task_id, worker) is None:
            return _said("taken", "another runner took the branch")
        outcome = _run(run, assignment, task.task_id, ledger, poll_s)
        ledger.finish_branch(session, branch, task.task_id, result_payload(evolve(outcome, worker=worker)))
        return {**_said("ran", ""), "status": outcome.result.status}
    finally:
        run.close()


def _run(run: BranchRun, assignment: BranchAssignment, task_id: str, ledger: FleetLedger, poll_s: float) -> BranchOutcome:
    stop = Cancellation("the parallel branch is no longer wanted")
    done = threading.Event()
    watch = getattr(run.lease, "watch", None)
    if watch is not None:  # the lock's connection broke: the session's runner may send the branch again
        watch(lambda: stop.cancel("the branch lock's database connection broke"))

    def poll() -> None:
        while not done.wait(poll_s):
            with suppress(Exception):
                entry = ledger.get_branch(assignment.session_id, assignment.branch)
                if entry is None or entry.task_id != task_id or entry.cancel_requested:
                    stop.cancel("the session's runner no longer wants this branch")
                    return

    threading.Thread(target=poll, name=f"orchestra-branch-{assignment.branch}", daemon=True).start()
    try:
        return run.run_branch(stop)
    except OrchestraError as error:
        return BranchOutcome(result=failed_branch(assignment, str(error)))
    finally:
        done.set()


def failed_branch(assignment: BranchAssignment, reason: str) -> BranchResult:
    """The result of a branch that could not run."""
    start = assignment.branch.rsplit("/", 1)[-1].split(":", 1)[-1]
    return BranchResult(start, StageStatus.FAIL.value, Outcome.fail(reason), None, ())


def _said(outcome: str, detail: str) -> dict[str, Any]:
    return {"outcome": outcome, "detail": detail}


__all__ = ["OpenBranchRun", "failed_branch", "run_branch_task"]
