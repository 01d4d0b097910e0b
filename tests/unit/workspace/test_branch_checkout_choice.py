"""Which parallel branches get lazy worktrees: those whose every node reads files only through Orchestra's own
tools; a branch with one node that runs a command (or a CLI agent) gets full checkouts."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from orchestra_core.engine.branch_workspaces import BranchPlan
from orchestra_core.model.graph import Node
from orchestra_core.runs.branch_workspaces import RunBranchWorkspaces
from orchestra_core.workspace.branches import BranchWorktrees


class RecordingWorktrees(BranchWorktrees):
    def __init__(self) -> None:
        self.forks: list[tuple[list[str], list[str]]] = []

    def fork(self, node_id: str, parent: str | None, paths: Sequence[str], lazy: Collection[str] = ()) -> None:
        self.forks.append((list(paths), sorted(lazy)))


SHELL = {"look", "cli"}  # a tool node, a CLI agent's node
WRITERS = {"left", "look", "cli", "right"}


def _fork(branches: Sequence[BranchPlan], **options: Any) -> tuple[list[str], list[str]]:
    worktrees = RecordingWorktrees()
    run = RunBranchWorkspaces(worktrees, lambda node: node in WRITERS, reads_lazily=lambda node: node not in SHELL, **options)
    run.fork(Node("fan"), None, branches)
    return worktrees.forks[0]


def test_only_branches_of_own_tool_nodes_are_lazy() -> None:
    plans = [
        BranchPlan("fan:left", "left", frozenset({"left"})),
        BranchPlan("fan:look", "look", frozenset({"look", "right"})),
        BranchPlan("fan:cli", "cli", frozenset({"cli"})),
        BranchPlan("fan:reader", "reader", frozenset({"reader"})),
    ]
    assert _fork(plans) == (["fan:left", "fan:look", "fan:cli"], ["fan:left"])


def test_without_a_judge_every_branch_gets_a_full_checkout() -> None:
    worktrees = RecordingWorktrees()
    RunBranchWorkspaces(worktrees, lambda node: True).fork(Node("fan"), None, [BranchPlan("fan:a", "a", frozenset({"a"}))])
    assert worktrees.forks == [(["fan:a"], [])]


def test_branches_that_may_run_on_other_machines_get_full_checkouts() -> None:
    plans = [BranchPlan("fan:left", "left", frozenset({"left"}))]
    assert _fork(plans, fork_all=lambda node: True) == (["fan:left"], [])
