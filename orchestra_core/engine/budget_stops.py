"""How a run ends when a budget of its session is reached: nothing new starts, and the node a budget stopped is not
recorded (a resume runs it again); docs/running.md, "Budgets"."""

from __future__ import annotations

from typing import Any

from orchestra_core.engine.execution import NodeRun
from orchestra_core.engine.routing import Finish
from orchestra_core.model.budget import BudgetGuard, BudgetVerdict
from orchestra_core.model.checkpoint import RunStatus
from orchestra_core.model.outcome import StageStatus

_DONE = (StageStatus.SUCCESS, StageStatus.PARTIAL_SUCCESS, StageStatus.SKIPPED)


class BudgetStops:
    """The run's budget checks between nodes, and the verdict that ended it."""

    def __init__(self, guard: BudgetGuard | None) -> None:
        self.guard = guard
        self.verdict: BudgetVerdict | None = None

    def before_node(self) -> Finish | None:
        """The end of the run when a budget of the session is reached."""
        verdict = self.guard.session_stop() if self.guard is not None else None
        if verdict is None:
            return None
        self.verdict = verdict
        return Finish(RunStatus.BUDGET_EXCEEDED, verdict.message)

    def after_node(self, run: NodeRun, stopped_in_branches: bool, cut_short: bool = False) -> Finish | None:
        """The end of the run when the session's budget stopped the node (at an agent's turn boundary, before a
        retry, or in its parallel branches here), or was reached while the node did not succeed or some of its
        branches did not finish (a fleet worker stopped them: this process only sees them skipped)."""
        if self.guard is None:
            return None
        stopped = run.stopped is not None or stopped_in_branches
        if not stopped and not cut_short and run.outcome.status in _DONE:
            return None
        finish = self.before_node()
        if finish is None and stopped:  # the guard no longer says which (it cannot be less spent): the stop's words
            reason = run.stopped or "a budget of the session is reached"
            self.verdict = BudgetVerdict("", "", "", message=reason)
            return Finish(RunStatus.BUDGET_EXCEEDED, reason)
        return finish

    def ended(self, finish: Finish, duration_s: float, last_node: str | None) -> dict[str, Any] | None:
        """The fields of the `BudgetExceeded` event of a run a budget ended (None for other ends)."""
        verdict = self.verdict
        if finish.status is not RunStatus.BUDGET_EXCEEDED or verdict is None:
            return None
        return {
            "budget": verdict.key, "spent": verdict.spent, "limit": verdict.limit, "message": finish.reason,
            "duration_s": duration_s, "node_id": last_node,
        }  # fmt: skip
