"""The pipeline engine: runs pipelines from the start node or from a checkpoint (see `run_loop`)."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from orchestra_core.engine.branch_workspaces import BranchWorkspaces
from orchestra_core.engine.execution import HandlerResolver
from orchestra_core.engine.remote_branches import RemoteBranches
from orchestra_core.engine.run_loop import DEFAULT_MAX_NODE_VISITS, CheckpointSaveError, RunLoop
from orchestra_core.engine.run_state import WorkspaceSnapshot
from orchestra_core.engine.stage import BranchResult
from orchestra_core.engine.streams import EventStream
from orchestra_core.model.budget import BudgetGuard
from orchestra_core.model.checkpoint import Checkpoint, RunResult
from orchestra_core.model.context import Context
from orchestra_core.model.events import EngineEvent, EventObserver
from orchestra_core.model.graph import Edge, Graph
from orchestra_core.ports.checkpoint_sink import CheckpointSink
from orchestra_core.ports.clock import Clock
from orchestra_core.ports.run_directory import RunDirectoryFactory

__all__ = ["DEFAULT_MAX_NODE_VISITS", "CheckpointSaveError", "PipelineEngine"]


class PipelineEngine:
    """Runs pipelines. One engine may run many pipelines, also concurrently; each run has its own state.

    Args:
        registry: Resolves each node's handler.
        run_directory: Opens the run directory of a logs root.
        clock: Time source; retry backoff sleeps go through it.
        observers: Receive every event (best effort).
        checkpoint_sinks: Receive every checkpoint; a failing sink aborts the run.
        max_node_visits: Node executions after which a run stops as looping (None: the graph's
            `max_node_visits` attribute, else 10,000).
        rng: Randomness for backoff jitter.
        workspace_snapshot: Returns repo -> HEAD SHA for each checkpoint (the workspace layer).
        branch_workspaces: Gives parallel branches their own worktrees and merges them at the join (the
            workspace layer); child runs of manager loops do without.
        remote_branches: Runs the branches of main-line fan-outs elsewhere (a fleet); None: here, in threads.
        budget: Says when a budget is reached: asked before each node and each retry (nothing new starts once the
            session's is; a node whose own is fails), and a stage asked to stop at its turn boundary is stopped
            (docs/running.md, "Budgets"). None: no budget.
    """

    def __init__(
        self,
        registry: HandlerResolver,
        *,
        run_directory: RunDirectoryFactory,
        clock: Clock,
        observers: Sequence[EventObserver] = (),
        checkpoint_sinks: Sequence[CheckpointSink] = (),
        max_node_visits: int | None = None,
        rng: random.Random | None = None,
        workspace_snapshot: WorkspaceSnapshot | None = None,
        branch_workspaces: BranchWorkspaces | None = None,
        remote_branches: RemoteBranches | None = None,
        budget: BudgetGuard | None = None,
    ) -> None:
        self.registry = registry
        self.run_directory = run_directory
        self.clock = clock
        self.observers = tuple(observers)
        self.checkpoint_sinks = tuple(checkpoint_sinks)
        self.max_node_visits = max_node_visits
        self.rng = rng or random.Random()
        self.workspace_snapshot = workspace_snapshot
        self.branch_workspaces = branch_workspaces
        self.remote_branches = remote_branches
        self.budget = budget

    def run(
        self,
        graph: Graph,
        *,
        session_id: str,
        logs_root: str,
        initial_context: Mapping[str, Any] | None = None,
        resume_from: Checkpoint | None = None,
        stop: threading.Event | None = None,
        observers: Sequence[EventObserver] = (),
        on_context: Callable[[Context], None] | None = None,
    ) -> RunResult:
        """Run a pipeline to its end, or continue one from a checkpoint.

        Args:
            graph: The pipeline, after transforms and validation.
            session_id: The run's session id.
            logs_root: The run directory.
            initial_context: Values to start with besides the `graph.*` mirror. On resume None means the
                manifest's (used only when a loop restart starts over).
            resume_from: Continue from this checkpoint instead of starting at the start node.
            stop: When set, the run stops before its next node (its checkpoint stays resumable); a
                `Cancellation` that is `cancel()`ed also cancels the attempt running now (its command killed, its
                agent loop stopped), which is not retried.
            observers: Extra observers for this run only.
            on_context: Called with the run's Context whenever a new one is made (start, restart).

        Returns:
            How the run ended. Pipeline failures are results, not exceptions.
        """
        run = RunLoop(self, graph, session_id, logs_root, observers, stop, on_context)
        return run.execute(initial_context, resume_from)

    def run_branch(
        self,
        graph: Graph,
        *,
        session_id: str,
        logs_root: str,
        start: Edge,
        context: Context,
        branch: str,
        stop_at: str | None,
        stage_keys: Mapping[str, str],
        visited: Sequence[str] = (),
        stop: threading.Event | None = None,
        single: bool = False,
    ) -> BranchResult:
        """Run one parallel branch on its own, as the runner of its session would have (a worker of a fleet does).

        Args:
            graph: The pipeline.
            session_id: The session the branch belongs to.
            logs_root: The run directory its stages write to.
            start: The edge the branch starts on.
            context: The branch's context (as it was at the fan-out).
            branch: The branch path.
            stop_at: The join node.
            stage_keys: The stage keys of its nodes that other branches may run too.
            visited: The nodes the run ran before the fan-out.
            stop: Cancelled when the branch is no longer wanted (its running attempt stops too).
            single: Run only the branch's first node, one attempt (a main-line node sent to another queue).

        Returns:
            How the branch ended (`skipped` when it was stopped before it finished).
        """
        run = RunLoop(self, graph, session_id, logs_root, (), stop, None)
        return run.walk_branch(
            start, context, branch=branch, stop_at=stop_at, stage_keys=stage_keys, visited=visited, single=single
        )

    def iter_events(self, graph: Graph, **kwargs: Any) -> EventStream:
        """Run in a background thread and iterate over the events; `stream.result` at the end."""
        return EventStream(lambda emit: self.run(graph, observers=(_Callback(emit),), **kwargs))

    def child(self, observers: Sequence[EventObserver]) -> PipelineEngine:
        """An engine for a supervised child run: same handlers and clock, no checkpoint sinks."""
        return PipelineEngine(
            self.registry,
            run_directory=self.run_directory,
            clock=self.clock,
            observers=observers,
            max_node_visits=self.max_node_visits,
            rng=self.rng,
            budget=self.budget,
        )


class _Callback:
    """An event observer calling a function."""

    def __init__(self, emit: Callable[[EngineEvent], None]) -> None:
        self.on_event = emit
