"""The seam between the engine and a fleet: a branch of a fan-out on the main line, or the work of a main-line node
that names another queue, may run elsewhere.

The engine hands each such branch to `RemoteBranches.run` with what the branch needs and a way to run it here; the
run layer (`orchestra_core.runs.fleet_branches`) sends it to a worker, or runs it here, and returns its result as if
it had walked the branch itself. The fork before and the join after stay the engine's, exactly as on one machine. A
main-line node whose `queue` this process does not serve has each attempt of its handler run by a worker of that
queue (`run_node`); its retries, timeout and events stay here.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Protocol

from attrs import field, frozen

from orchestra_core.engine.stage import BranchResult, Handler, StageRun
from orchestra_core.graph.fan_out import branch_edges, distances
from orchestra_core.model.context import Context
from orchestra_core.model.graph import Edge, Graph, Node
from orchestra_core.model.outcome import Outcome


@frozen
class BranchRequest:
    """One branch of a fan-out, with everything its walk needs.

    Attributes:
        node: The parallel node.
        start: The edge the branch starts on (`start.target` is its first node).
        index: The edge's position among the node's branch edges (how a worker finds it in the same graph).
        branch: The branch path (`<parallel node>:<start node>`).
        nodes: Every node the branch may run before the join.
        stop_at: The join node (None: the branch runs to an exit or a dead end).
        stage_keys: The stage keys of its nodes that other branches may run too.
        context: The branch's own copy of the context at the fan-out.
        visited: The nodes the run ran before the fan-out, one entry per visit (for the visit bounds).
        cancel: Set when the branch is no longer wanted (first_success, the node's timeout, a cancel).
    """

    node: Node
    start: Edge
    index: int
    branch: str
    nodes: frozenset[str]
    stop_at: str | None
    stage_keys: Mapping[str, str]
    context: Context = field(eq=False)
    visited: tuple[str, ...]
    cancel: threading.Event = field(eq=False)


class RemoteBranches(Protocol):
    """Runs the branches of main-line fan-outs (thread-safe: a fan-out's branches call it concurrently)."""

    def forks_every_branch(self, node: Node) -> bool:
        """Whether the branches of this fan-out may leave this process: each then gets its own workspace branch
        (also one that only reads), so that a worker can fetch it."""
        ...

    def run(self, request: BranchRequest, here: Callable[[], BranchResult]) -> BranchResult:
        """Run the branch: on a worker, or in this process by calling `here()`; its result either way."""
        ...

    def runs_node(self, node: Node) -> bool:
        """Whether a main-line node's work goes to the workers of its queue (it names one this process does not
        serve)."""
        ...

    def run_node(self, node: Node, context: Context, stage: StageRun) -> Outcome:
        """Run one attempt of a main-line node on a worker of its queue; its outcome."""
        ...


class HandlerResolver(Protocol):
    def resolve(self, node: Node) -> Handler: ...


class RemoteNodes:
    """The engine's handler registry, with main-line nodes that name another queue sent to its workers."""

    def __init__(self, registry: HandlerResolver, remote: RemoteBranches) -> None:
        self._registry = registry
        self._remote = remote

    def resolve(self, node: Node) -> Handler:
        handler = self._registry.resolve(node)
        return _RemoteNode(handler, self._remote) if self._remote.runs_node(node) else handler


class _RemoteNode:
    """A node's handler whose main-line attempts run on a worker (in a branch, the branch's runner runs it)."""

    def __init__(self, handler: Handler, remote: RemoteBranches) -> None:
        self._handler = handler
        self._remote = remote
        self.enforces_timeout = getattr(handler, "enforces_timeout", False)

    def execute(self, node: Node, context: Context, graph: Graph, stage: StageRun) -> Outcome | None:
        if stage.branch is not None:
            return self._handler.execute(node, context, graph, stage)
        return self._remote.run_node(node, context, stage)


def branch_request(
    graph: Graph,
    start: Edge,
    context: Context,
    visited: Iterable[str],
    *,
    branch: str,
    stop_at: str | None,
    stage_keys: Mapping[str, str],
    cancel: threading.Event,
) -> BranchRequest:
    """The request for the branch of a main-line fan-out that starts on `start`."""
    node = graph.nodes[start.source]
    return BranchRequest(
        node=node, start=start, index=branch_edges(graph, node).index(start), branch=branch,
        nodes=frozenset(distances(graph, start.target, stop_at or node.id)), stop_at=stop_at, stage_keys=stage_keys,
        context=context, visited=tuple(visited), cancel=cancel,
    )  # fmt: skip
