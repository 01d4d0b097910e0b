"""The seam between parallel fan-outs and the workspace: give branches their own worktrees, merge them at the
join. The engine only calls it; the run (`orchestra_core.runs`) implements it with the workspace layer."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from attrs import field, frozen

from orchestra_core.model.graph import Node
from orchestra_core.model.immutable import frozen_map


@frozen
class BranchPlan:
    """One branch of a fan-out, as the workspace needs to know it.

    Attributes:
        path: The branch path (`StageRun.branch` inside it): `<parallel node>:<start node>`, nested ones
            below their parent's path (`fan:a/inner:x`).
        start: The branch's first node.
        nodes: Every node the branch may run before the join.
    """

    path: str
    start: str
    nodes: frozenset[str]


@frozen
class JoinResult:
    """What joining the branches' workspaces gave.

    Attributes:
        failed: The join failed (a merge conflict): the parallel node's outcome becomes FAIL.
        context_updates: Values for the context (e.g. `workspace.merge_conflicts`, `workspace.merge_summary`).
        reason: Why it failed, one line.
    """

    failed: bool = False
    context_updates: Mapping[str, Any] = field(factory=dict, converter=frozen_map)
    reason: str = ""


class BranchWorkspaces(Protocol):
    """Called by the parallel handler around its branches (thread-safe: nested fan-outs run concurrently)."""

    def fork(self, node: Node, parent: str | None, branches: Sequence[BranchPlan]) -> None:
        """Before the branches run: set up what each branch works in (forked from the `parent` branch's
        state; None is the main line). A branch set up by an earlier run of `node` starts over.

        Raises:
            Exception: The branches cannot run (the parallel node fails with the message).
        """
        ...

    def join(self, node: Node, parent: str | None, statuses: Mapping[str, str]) -> JoinResult:
        """After the branches ran (`statuses`: branch path -> final status): bring their work into `parent`."""
        ...


class NoBranchWorkspaces:
    """Branches share the run's workspace (no workspace layer, or a child run)."""

    def fork(self, node: Node, parent: str | None, branches: Sequence[BranchPlan]) -> None:
        return None

    def join(self, node: Node, parent: str | None, statuses: Mapping[str, str]) -> JoinResult:
        return JoinResult()
