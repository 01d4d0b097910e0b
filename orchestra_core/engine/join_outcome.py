"""A merge conflict at fan-in is the join node's outcome, routed by the join node's edges.

The parallel node leaves the conflict pending in its line's context (`internal.pending_join`); when that line
reaches the join node, the engine gives the node the merge's outcome (FAIL) without running its handler: the
merge is the fan-in's work. When the run goes on from there to another node, the conflicted merge is committed
(markers left in the files) for that node to resolve; when it does not, the run fails as the join did.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from attrs import field, frozen

from orchestra_core.engine.branch_workspaces import BranchWorkspaces
from orchestra_core.engine.routing import Advance, Finish, Transition
from orchestra_core.model.checkpoint import RunStatus
from orchestra_core.model.context import Context
from orchestra_core.model.graph import Graph, Node
from orchestra_core.model.immutable import frozen_map
from orchestra_core.model.outcome import Outcome, StageStatus

PENDING_JOIN_KEY = "internal.pending_join"


@frozen
class PendingJoin:
    """A fan-out's merge conflict waiting for its join node.

    Attributes:
        join: The join node, which takes the conflict as its outcome.
        fan_out: The parallel node whose merge conflicted.
        line: The branch path both run in (None: the main line).
        reason: Why the merge failed: the join node's failure_reason.
        merge: What `BranchWorkspaces.land_conflicts` needs to commit the merge (`JoinResult.pending_merge`).
    """

    join: str
    fan_out: str
    line: str | None
    reason: str
    merge: Mapping[str, Any] = field(factory=dict, converter=frozen_map)

    def to_json(self) -> dict[str, Any]:
        """The context value (plain JSON, so a checkpoint keeps it for a resumed run)."""
        return {"join": self.join, "fan_out": self.fan_out, "line": self.line, "reason": self.reason,
                "merge": _plain(self.merge)}  # fmt: skip

    def outcome(self) -> Outcome:
        """The join node's outcome."""
        notes = f"the merge at fan-in of {self.fan_out} conflicted; {self.join} takes its outcome (its handler did not run)"
        return Outcome(StageStatus.FAIL, notes=notes, failure_reason=self.reason)

    @classmethod
    def of(cls, context: Context, line: str | None) -> PendingJoin | None:
        """The conflict pending in `line` (None when there is none, or the value is not one)."""
        value = context.get(PENDING_JOIN_KEY)
        if not isinstance(value, Mapping):
            return None
        try:
            pending = cls(str(value["join"]), str(value["fan_out"]), value.get("line"), str(value["reason"]),
                          value.get("merge") or {})  # fmt: skip
        except (KeyError, TypeError, ValueError):
            return None
        return pending if pending.line == line else None


def pending_join_at(context: Context, node_id: str, line: str | None) -> PendingJoin | None:
    """The conflict `node_id` takes as its outcome when `line` reaches it, if any."""
    pending = PendingJoin.of(context, line)
    return pending if pending is not None and pending.join == node_id else None


def settle_pending_join(
    workspaces: BranchWorkspaces,
    graph: Graph,
    node: Node,
    context: Context,
    line: str | None,
    transition: Transition,
) -> Transition:
    """After `node` ran in `line` and routing chose `transition`: a join node that took a conflict and goes on to
    another node has the conflicted merge committed first (a Finish(FAIL) when that fails), unless that node is
    the fan-out itself, which runs again from fresh branches; a line that would end well with a conflict still
    pending (its join never reached) fails with it instead."""
    pending = PendingJoin.of(context, line)
    if pending is None:
        return transition
    if pending.join == node.id and isinstance(transition, Advance):
        if transition.target == pending.fan_out:  # the fan-out runs again: it forks its branches afresh
            return transition
        return _land(workspaces, graph, pending, context, transition)
    if isinstance(transition, Finish) and transition.status is RunStatus.SUCCESS:
        return Finish(RunStatus.FAIL, unrouted_reason(pending))
    return transition


def unrouted_reason(pending: PendingJoin) -> str:
    """Why a line fails that ended with its conflict still pending."""
    return f"{pending.reason}; the join node {pending.join}, which routes it, was never reached"


def _land(
    workspaces: BranchWorkspaces, graph: Graph, pending: PendingJoin, context: Context, advance: Advance
) -> Transition:
    fan_out = graph.nodes.get(pending.fan_out)
    where = f"the conflicted merge at fan-in of {pending.fan_out} for {advance.target}"
    if fan_out is None:
        return Finish(RunStatus.FAIL, f"could not commit {where}: {pending.fan_out} is no longer in the pipeline")
    try:
        updates = workspaces.land_conflicts(fan_out, pending.line, pending.merge, next_node=advance.target)
    except Exception as error:
        return Finish(RunStatus.FAIL, f"could not commit {where}: {error}")
    context.apply_updates(updates)
    context.remove(PENDING_JOIN_KEY)
    return advance


def _plain(value: Any) -> Any:
    """Frozen mappings and tuples as dicts and lists."""
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value
