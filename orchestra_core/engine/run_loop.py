"""One run of a pipeline (Attractor 3.2): start or resume, the traversal loop, checkpoints, the end."""

from __future__ import annotations

import random
import threading
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from attrs import evolve

from orchestra_core.engine.branch_workspaces import BranchWorkspaces, NoBranchWorkspaces
from orchestra_core.engine.branches import BranchWalker, parent_branch
from orchestra_core.engine.budget_stops import BudgetStops
from orchestra_core.engine.emitter import BranchForwarder, Emitter
from orchestra_core.engine.execution import HandlerResolver, StageExecutor, StageVisit
from orchestra_core.engine.join_outcome import settle_pending_join
from orchestra_core.engine.remote_branches import RemoteBranches, RemoteNodes, branch_request
from orchestra_core.engine.routing import (
    Advance,
    Finish,
    Restart,
    Transition,
    exit_transition,
    goal_gate_message,
    goal_gate_target,
    next_transition,
    outcome_summary,
    unsatisfied_goal_gate,
    visit_limit_failure,
)
from orchestra_core.engine.run_state import (
    Position,
    RunState,
    WorkspaceSnapshot,
    failed_run_position,
    fresh_context,
    manifest_for,
    resumed_edge,
)
from orchestra_core.engine.stage import BranchResult
from orchestra_core.model.budget import BudgetGuard
from orchestra_core.model.checkpoint import Checkpoint, RunResult, RunStatus
from orchestra_core.model.context import Context
from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.events import (
    BudgetExceeded,
    CheckpointSaved,
    EdgeSelected,
    EventObserver,
    GoalGateUnsatisfied,
    PipelineCompleted,
    PipelineFailed,
    PipelineRestarted,
    PipelineStarted,
)
from orchestra_core.model.graph import Edge, Graph, Node
from orchestra_core.model.outcome import Outcome, StageStatus
from orchestra_core.ports.checkpoint_sink import CheckpointSink
from orchestra_core.ports.clock import Clock
from orchestra_core.ports.run_directory import RunDirectoryFactory

DEFAULT_MAX_NODE_VISITS = 10_000


class Engine(Protocol):
    """What a run takes from the engine that runs it (`PipelineEngine`)."""

    @property
    def registry(self) -> HandlerResolver: ...
    @property
    def run_directory(self) -> RunDirectoryFactory: ...
    @property
    def clock(self) -> Clock: ...
    @property
    def observers(self) -> tuple[EventObserver, ...]: ...
    @property
    def checkpoint_sinks(self) -> tuple[CheckpointSink, ...]: ...
    @property
    def max_node_visits(self) -> int | None: ...
    @property
    def rng(self) -> random.Random: ...
    @property
    def workspace_snapshot(self) -> WorkspaceSnapshot | None: ...
    @property
    def branch_workspaces(self) -> BranchWorkspaces | None: ...
    @property
    def remote_branches(self) -> RemoteBranches | None: ...
    @property
    def budget(self) -> BudgetGuard | None: ...

    def child(self, observers: Sequence[EventObserver]) -> Engine:
        """An engine for a supervised child run."""
        ...

    def run(
        self,
        graph: Graph,
        *,
        session_id: str,
        logs_root: str,
        initial_context: Mapping[str, Any] | None = None,
        stop: threading.Event | None = None,
        on_context: Callable[[Context], None] | None = None,
    ) -> RunResult:
        """Run a pipeline."""
        ...


class CheckpointSaveError(OrchestraError):
    """A checkpoint could not be written to the run directory or a checkpoint sink."""


class RunLoop:
    """One run: the main loop plus the engine services handlers use (branches, child runs)."""

    def __init__(
        self,
        engine: Engine,
        graph: Graph,
        session_id: str,
        logs_root: str,
        observers: Sequence[EventObserver],
        stop: threading.Event | None,
        on_context: Callable[[Context], None] | None,
    ) -> None:
        self.engine = engine
        self.graph = graph
        self.session_id = session_id
        self.clock = engine.clock
        self.directory = engine.run_directory.open(logs_root)
        self.emitter = Emitter(session_id, engine.clock, (*engine.observers, *observers))
        self.stop = stop or threading.Event()
        self.workspaces: BranchWorkspaces = engine.branch_workspaces or NoBranchWorkspaces()
        self.on_context = on_context
        self.max_visits = engine.max_node_visits or graph.get_int("max_node_visits", DEFAULT_MAX_NODE_VISITS)
        self.budget_stops = BudgetStops(engine.budget)
        remote = engine.remote_branches
        self.executor = StageExecutor(
            registry=RemoteNodes(engine.registry, remote) if remote is not None else engine.registry,
            graph=graph,
            directory=self.directory,
            clock=engine.clock,
            rng=engine.rng,
            session_id=session_id,
            services=self,
            emit=self.emitter.emit,
            budget=engine.budget,
        )
        self.branches = BranchWalker(
            graph, self.executor, self.clock, self.max_visits, lambda: self.state.visit_counts, self.workspaces
        )
        self.state: RunState
        self.last_checkpoint: Checkpoint | None = None

    # engine services for handlers

    def run_branch(self, start: Edge, context: Context, **kwargs: Any) -> BranchResult:
        remote = self.engine.remote_branches
        branch: str = kwargs["branch"]
        if remote is None or parent_branch(branch) is not None:  # nested fan-outs run where their branch runs
            return self.branches.walk(start, context, **kwargs)
        request = branch_request(self.graph, start, context, self.state.visit_counts.elements(), **kwargs)
        result = remote.run(request, lambda: self.branches.walk(start, context, **kwargs))
        self.branches.keep(start, branch, result)
        return result

    def walk_branch(
        self,
        start: Edge,
        context: Context,
        *,
        branch: str,
        stop_at: str | None,
        stage_keys: Mapping[str, str],
        visited: Sequence[str],
        single: bool = False,
    ) -> BranchResult:
        """Walk one branch on its own (a worker runs a branch its session's runner sent it): no start node, no
        checkpoints; its nested fan-outs run here. `single`: only its first node, one attempt."""
        before = Counter(visited)
        self.branches = BranchWalker(
            self.graph, self.executor, self.clock, self.max_visits, lambda: before, self.workspaces
        )
        try:
            return self.branches.walk(
                start, context, branch=branch, stop_at=stop_at, stage_keys=stage_keys, cancel=self.stop, single=single
            )
        finally:
            unwritten = self._close_directory()
            if unwritten is not None:
                raise CheckpointSaveError(unwritten)

    def run_child(
        self,
        graph: Graph,
        *,
        logs_root: str,
        initial_context: Mapping[str, Any],
        observers: Sequence[EventObserver],
        stop: threading.Event,
        context_ready: Callable[[Context], None] | None = None,
        branch: str = "child",
    ) -> RunResult:
        child = self.engine.child((*observers, BranchForwarder(self.emitter, branch)))
        return child.run(
            graph,
            session_id=self.session_id,
            logs_root=logs_root,
            initial_context=initial_context,
            stop=stop,
            on_context=context_ready,
        )

    # start, resume, end

    def execute(self, initial: Mapping[str, Any] | None, resume_from: Checkpoint | None) -> RunResult:
        started = self.clock.monotonic()
        try:
            begin = self._resume(resume_from, initial) if resume_from is not None else self._start(initial or {})
            finish = begin if isinstance(begin, Finish) else self._loop(begin)
        except CheckpointSaveError as error:
            finish = Finish(RunStatus.FAIL, str(error))
        finally:
            unwritten = self._close_directory()
        if unwritten is not None:
            reason = f"{finish.reason}; also {unwritten}" if finish.status is RunStatus.FAIL else unwritten
            finish = Finish(RunStatus.FAIL, reason)
        return self._result(finish, started)

    def _close_directory(self) -> str | None:
        """End the run directory's background work, also when the run raised; why it failed, if it did."""
        try:
            self.directory.close()
        except Exception as error:
            return f"could not save a checkpoint to the run directory {self.directory.root}: {error}"
        return None

    def _context(self, context: Context) -> Context:
        if self.on_context is not None:
            self.on_context(context)
        return context

    def _start(self, initial: Mapping[str, Any]) -> Position | Finish:
        self.state = RunState(self._context(fresh_context(self.graph, initial)), dict(initial))
        start = self.graph.start_node()
        self.directory.write_manifest(manifest_for(self.graph, self.session_id, self.directory.root, self.clock.now(), initial))
        self._emit_started(start.id if start else "", resumed=False)
        if start is None:
            return Finish(RunStatus.FAIL, "the pipeline needs exactly one start node (shape=Mdiamond)")
        self._save("", start.id)
        return Position(start.id)

    def _resume(self, checkpoint: Checkpoint, initial: Mapping[str, Any] | None) -> Position | Finish:
        manifest = self.directory.read_manifest()
        if initial is None:
            initial = manifest.initial_context if manifest is not None else {}
        self.state = RunState.restored(checkpoint, initial)
        self._context(self.state.context)
        self.last_checkpoint = checkpoint
        self.directory.start_round(checkpoint.loop_restarts)
        if manifest is not None:
            self.directory.write_manifest(evolve(manifest, resumed_at=(*manifest.resumed_at, self.clock.now())))
        begin = self._resume_position(checkpoint)
        self._emit_started(begin.node_id if isinstance(begin, Position) else checkpoint.current_node, resumed=True)
        return begin

    def _resume_position(self, checkpoint: Checkpoint) -> Position | Finish:
        """The checkpoint's next node; for a failed run the node that failed (or the exit's goal gates) again."""
        if checkpoint.status is RunStatus.FAIL:
            again = failed_run_position(self.graph, checkpoint, self.state.context)
            return again if again is not None else Finish(RunStatus.FAIL, checkpoint.failure_reason)
        if checkpoint.finished or checkpoint.next_node is None:
            return Finish(RunStatus.SUCCESS, checkpoint.failure_reason)
        edge = resumed_edge(self.graph, checkpoint, self.state.context)
        return Position(checkpoint.next_node, edge, checkpoint.current_node or None, resumed=True)

    def _emit_started(self, start_node: str, *, resumed: bool) -> None:
        fields = {
            "name": self.graph.name,
            "goal": self.graph.goal,
            "logs_root": self.directory.root,
            "start_node": start_node,
            "resumed": resumed,
        }
        self.emitter.emit(PipelineStarted, None, fields)

    def _result(self, finish: Finish, started: float) -> RunResult:
        duration = self.clock.monotonic() - started
        state = self.state
        stopped = self.budget_stops.ended(finish, duration, state.completed_nodes[-1] if state.completed_nodes else None)
        if stopped is not None:
            self.emitter.emit(BudgetExceeded, None, stopped)
        elif finish.status is RunStatus.SUCCESS:
            fields = {
                "duration_s": duration,
                "artifact_count": len(self.directory.artifacts.list()),
                "completed_nodes": tuple(state.completed_nodes),
            }
            self.emitter.emit(PipelineCompleted, None, fields)
        else:
            last = state.completed_nodes[-1] if state.completed_nodes else None
            self.emitter.emit(PipelineFailed, None, {"error": finish.reason, "duration_s": duration, "node_id": last})
        return RunResult(
            session_id=self.session_id,
            status=finish.status,
            completed_nodes=tuple(state.completed_nodes),
            node_outcomes=state.node_outcomes,
            context=state.context.snapshot(),
            logs_root=self.directory.root,
            failure_reason=finish.reason,
            checkpoint=self.last_checkpoint,
        )

    # the loop

    def _loop(self, position: Position) -> Finish:
        while True:
            if self.stop.is_set():
                return Finish(RunStatus.FAIL, f"stopped before node {position.node_id}")
            node = self.graph.nodes.get(position.node_id)
            if node is None:
                return Finish(RunStatus.FAIL, f"node {position.node_id!r} is not in the pipeline")
            if self.graph.is_exit(node):
                gate = self._exit_gate()
                if isinstance(gate, Finish):
                    self._save(self.state.completed_nodes[-1] if self.state.completed_nodes else "", None, gate)
                    return gate
                if isinstance(gate, Advance):
                    position = self._jump_for_gate(gate, position)
                    continue
            budget_stop = None if self.graph.is_exit(node) else self.budget_stops.before_node()
            if budget_stop is not None:  # an exit costs nothing: a run whose work is done ends there
                return budget_stop
            if self.state.node_visits >= self.max_visits:
                return Finish(RunStatus.FAIL, self._looping_reason())
            over_limit = visit_limit_failure(node, self.graph, self.state.visit_counts[node.id])
            if over_limit is not None:
                self._save(self.state.completed_nodes[-1] if self.state.completed_nodes else "", None, over_limit)
                return over_limit
            transition = self._step(node, position)
            if isinstance(transition, Finish):
                return transition
            position = self._restart(node, transition) if isinstance(transition, Restart) else self._advance(node, transition)

    def _looping_reason(self) -> str:
        """Why the run stopped as looping: the goal gate that kept sending it back, else the last failed stage
        and its reason (when a stage failed), then the limit and the last nodes."""
        outcomes = self.state.node_outcomes
        try:
            gate = unsatisfied_goal_gate(self.graph, outcomes, self.state.context)
        except OrchestraError:
            gate = None
        if gate is not None:
            cause = goal_gate_message(gate, outcomes[gate.id], goal_gate_target(gate, self.graph)) + "; "
        else:
            failed = next(
                (n for n in reversed(self.state.completed_nodes) if n in outcomes and outcomes[n].status == StageStatus.FAIL),
                None,
            )
            cause = f"stage {failed} last failed ({outcome_summary(outcomes[failed])}); " if failed else ""
        return cause + self.state.looping_message(self.max_visits)

    def _step(self, node: Node, position: Position) -> Transition:
        """Execute one node, record it, decide what follows and save the checkpoint."""
        state = self.state
        state.node_visits += 1
        visit = StageVisit(
            index=state.node_visits,
            branch=None,
            incoming_edge=position.edge,
            previous_node=position.previous,
            resumed=position.resumed,
            stage_key=node.id,
            completed_nodes=state.completed_nodes,
            node_outcomes=state.node_outcomes,
            cancel=self.stop,  # a cancelled (not merely set) stop also cancels the attempt running now
        )
        stops = self.executor.budget_stops
        run = self.executor.execute(node, state.context, visit)
        results = self.branches.take_results(None, node) if node.handler_type == "parallel" else []
        cut_short = any(result.status == StageStatus.SKIPPED.value for result in results)  # here, or on a worker
        stopped = self.budget_stops.after_node(run, self.executor.budget_stops > stops, cut_short)
        if stopped is not None:  # the node is not recorded: a resume runs it again
            return stopped
        if node.handler_type == "parallel":
            state.merge_branches(results)
        state.record(node, run.outcome, run.attempts)
        transition = self._transition(node, run.outcome)
        transition = settle_pending_join(self.workspaces, self.graph, node, state.context, None, transition)
        if isinstance(transition, Finish):
            self._save(node.id, None, transition)
        elif isinstance(transition, Advance):
            self._save(node.id, transition.target)
        return transition

    def _transition(self, node: Node, outcome: Outcome) -> Transition:
        try:
            transition = next_transition(self.graph, node, outcome, self.state.context)
        except OrchestraError as error:
            return Finish(RunStatus.FAIL, f"cannot route from {node.id}: {error}")
        if isinstance(transition, Finish) and transition.status is RunStatus.SUCCESS and not self.graph.is_exit(node):
            return self._exit_gate() or transition
        return transition

    def _exit_gate(self) -> Transition | None:
        """The goal gates' verdict before the run may end (`exit_transition`); a gate whose condition does not
        parse fails the run (validation refuses such a pipeline first)."""
        try:
            return exit_transition(self.graph, self.state.node_outcomes, self.state.context)
        except OrchestraError as error:
            return Finish(RunStatus.FAIL, f"cannot check the goal gates: {error}")

    def _advance(self, node: Node, transition: Advance) -> Position:
        label = transition.edge.label if transition.edge else ""
        fields = {"source": node.id, "target": transition.target, "label": label, "reason": transition.reason}
        self.emitter.emit(EdgeSelected, None, fields)
        return Position(transition.target, transition.edge, node.id)

    def _jump_for_gate(self, gate: Advance, position: Position) -> Position:
        outcome = self.state.node_outcomes[gate.gate]
        fields = {
            "node_id": gate.gate,
            "status": outcome.status.value,
            "retry_target": gate.target,
            "reason": outcome.failure_reason,
        }
        self.emitter.emit(GoalGateUnsatisfied, None, fields)
        fields = {"source": position.node_id, "target": gate.target, "label": "", "reason": gate.reason}
        self.emitter.emit(EdgeSelected, None, fields)
        return Position(gate.target, None, position.previous)

    def _restart(self, node: Node, restart: Restart) -> Position:
        state = self.state
        state.start_over(self._context(fresh_context(self.graph, state.initial_context)))
        self.directory.start_round(state.loop_restarts)
        fields = {"node_id": restart.target, "from_node": node.id, "restart_count": state.loop_restarts}
        self.emitter.emit(PipelineRestarted, None, fields)
        self._save("", restart.target)
        return Position(restart.target, restart.edge, None)

    def _save(self, current: str, next_node: str | None, finish: Finish | None = None) -> None:
        """Save a checkpoint to the run directory, then to every sink; any failure aborts the run."""
        snapshot = self.engine.workspace_snapshot() if self.engine.workspace_snapshot else {}
        checkpoint = self.state.checkpoint(current, next_node, finish, self.clock.now(), snapshot)
        targets: list[tuple[str, Callable[[Checkpoint], None]]] = [
            (f"the run directory {self.directory.root}", self.directory.save_checkpoint),
            *((f"checkpoint sink {sink!r}", sink.save) for sink in self.engine.checkpoint_sinks),
        ]
        for name, save in targets:
            try:
                save(checkpoint)
            except Exception as error:
                where = current or "start"
                raise CheckpointSaveError(f"could not save the checkpoint after {where} to {name}: {error}") from error
        self.emitter.emit(CheckpointSaved, None, {"node_id": current, "checkpoint": checkpoint})
        self.last_checkpoint = checkpoint
