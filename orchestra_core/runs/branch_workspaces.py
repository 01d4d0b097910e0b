"""The run's side of the engine's BranchWorkspaces seam: which branches may write, and the workspace's
BranchWorktrees that give them worktrees and merge them at the join."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from orchestra_core.engine.branch_workspaces import BranchPlan, JoinResult
from orchestra_core.model.graph import Node
from orchestra_core.model.outcome import StageStatus
from orchestra_core.workspace.branches import BranchWorktrees, MergeReport

CONFLICTS_KEY = "workspace.merge_conflicts"
SUMMARY_KEY = "workspace.merge_summary"
_MERGED = (StageStatus.SUCCESS.value, StageStatus.PARTIAL_SUCCESS.value)


class RunBranchWorkspaces:
    """Forks a worktree per repo for each branch that may write (`may_write(node_id)` for one of its nodes);
    read-only branches share their parent's, unless `fork_all(node)` says the fan-out's branches may run on other
    machines (which fetch each branch's own git branch). A branch whose every node `reads_lazily` (it uses only
    Orchestra's own file tools) gets lazy worktrees, the others full checkouts. At the join, branches that
    succeeded are merged; a conflict is landed with its markers when the join node routes it on
    (`land_conflicts`)."""

    def __init__(
        self,
        worktrees: BranchWorktrees,
        may_write: Callable[[str], bool],
        fork_all: Callable[[Node], bool] | None = None,
        reads_lazily: Callable[[str], bool] | None = None,
    ) -> None:
        self._worktrees = worktrees
        self._may_write = may_write
        self._fork_all = fork_all or (lambda node: False)
        self._reads_lazily = reads_lazily or (lambda node_id: False)

    def fork(self, node: Node, parent: str | None, branches: Sequence[BranchPlan]) -> None:
        every = parent is None and self._fork_all(node)
        writing = [plan for plan in branches if every or any(self._may_write(n) for n in sorted(plan.nodes))]
        if not writing:
            return
        lazy = [plan.path for plan in writing if not every and all(self._reads_lazily(n) for n in plan.nodes)]
        self._worktrees.fork(node.id, parent, [plan.path for plan in writing], lazy=lazy)

    def join(self, node: Node, parent: str | None, statuses: Mapping[str, str]) -> JoinResult:
        merge = [path for path, status in statuses.items() if status in _MERGED]
        report = self._worktrees.join(node.id, parent, list(statuses), merge)
        if not report.branches:
            return JoinResult()
        updates = _context_updates(report)
        if not report.failed:
            return JoinResult(context_updates=updates)
        return JoinResult(failed=True, context_updates=updates, reason=conflict_reason(node.id, report),
                          pending_merge=report.pending)  # fmt: skip

    def land_conflicts(
        self, node: Node, parent: str | None, pending_merge: Mapping[str, Any], *, next_node: str
    ) -> Mapping[str, Any]:
        return _context_updates(self._worktrees.land_conflicts(node.id, parent, pending_merge, next_node))


def conflict_reason(node_id: str, report: MergeReport) -> str:
    """One line naming, per conflict, the repo, the branch merged and the one merged into, and the files."""
    parts = [
        f"{c['repo']}: {c['branch']} ({c['branch_path']}) into {c['into']} conflicts in {', '.join(c['files'])}"
        for c in report.conflicts
    ]
    return f"merge conflict at fan-in of {node_id}: {'; '.join(parts)}"


def _context_updates(report: MergeReport) -> dict[str, Any]:
    return {CONFLICTS_KEY: [dict(conflict) for conflict in report.conflicts], SUMMARY_KEY: report.summary()}
