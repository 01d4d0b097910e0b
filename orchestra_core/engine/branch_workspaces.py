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
        failed: The join failed (a merge conflict): the fan-out's join node takes it as its outcome (FAIL), or,
            without a join node, the parallel node fails.
        context_updates: Values for the context (e.g. `workspace.merge_conflicts`, `workspace.merge_summary`).
        reason: Why it failed, one line.
        pending_merge: With a conflict, what `land_conflicts` needs to commit the merge with its conflict markers
            if the run goes on from the join node to another node (plain JSON values, kept in the context until
            then, so a resumed run can still land it).
    """

    failed: bool = False
    context_updates: Mapping[str, Any] = field(factory=dict, converter=frozen_map)
    reason: str = ""
    pending_merge: Mapping[str, Any] = field(factory=dict, converter=frozen_map)


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
        """After the branches ran (`statuses`: branch path -> final status): bring their work into `parent`.

        On a merge conflict nothing moves and the branches' worktrees stay: the result says why and carries the
        `pending_merge` for `land_conflicts`.
        """
        ...

    def land_conflicts(
        self, node: Node, parent: str | None, pending_merge: Mapping[str, Any], *, next_node: str
    ) -> Mapping[str, Any]:
        """The run goes on from the join node that took `node`'s merge conflict to `next_node`: commit the merge on
        `parent`'s branch as git computes it, with the conflict markers left in the files for `next_node` to
        resolve, check it out there and remove the branches' worktrees (their commits stay reachable through the
        merge). Idempotent over a branch put back where it was (a resume restores the checkpoint's head).

        Args:
            node: The parallel node whose join conflicted.
            parent: The branch the fan-out ran in (None: the main line).
            pending_merge: The join's `JoinResult.pending_merge`.
            next_node: The node the run goes on to (named in the merge commit's message).

        Returns:
            Context updates (`workspace.merge_conflicts` and `workspace.merge_summary` as landed).

        Raises:
            Exception: The merge could not be committed (the run fails with the message).
        """
        ...


class NoBranchWorkspaces:
    """Branches share the run's workspace (no workspace layer, or a child run)."""

    def fork(self, node: Node, parent: str | None, branches: Sequence[BranchPlan]) -> None:
        return None

    def join(self, node: Node, parent: str | None, statuses: Mapping[str, str]) -> JoinResult:
        return JoinResult()

    def land_conflicts(
        self, node: Node, parent: str | None, pending_merge: Mapping[str, Any], *, next_node: str
    ) -> Mapping[str, Any]:
        return {}
