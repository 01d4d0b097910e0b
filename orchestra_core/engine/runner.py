"""The pipeline engine (Attractor 3.2): the traversal loop, checkpoints, resume and loop restarts."""

from __future__ import annotations

import os
import random
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from attrs import define, evolve, field

from orchestra_core.engine.branches import BranchWalker
from orchestra_core.engine.checkpoint import Checkpoint, OutcomeMap, RunManifest, RunResult, RunStatus
from orchestra_core.engine.context import Context
from orchestra_core.engine.edges import select_edge
from orchestra_core.engine.emitter import BranchForwarder, Emitter, EventStream
from orchestra_core.engine.events import (
    CheckpointSaved,
    EdgeSelected,
    EventObserver,
    GoalGateUnsatisfied,
    PipelineCompleted,
    PipelineFailed,
    PipelineRestarted,
    PipelineStarted,
)
from orchestra_core.engine.execution import HandlerResolver, StageExecutor, StageVisit, apply_outcome
from orchestra_core.engine.outcome import Outcome, StageStatus
from orchestra_core.engine.routing import (
    Advance,
    Finish,
    Restart,
    Transition,
    exit_transition,
    next_transition,
)
from orchestra_core.engine.stage import BranchResult
from orchestra_core.errors import OrchestraError
from orchestra_core.graph.model import Edge, Graph, Node
from orchestra_core.ports.checkpoint_sink import CheckpointSink
from orchestra_core.ports.clock import Clock
from orchestra_core.ports.run_directory import RunDirectoryFactory

DEFAULT_MAX_NODE_VISITS = 10_000
WorkspaceSnapshot = Callable[[], Mapping[str, str]]


class CheckpointSaveError(OrchestraError):
    """A checkpoint could not be written to the run directory or a checkpoint sink."""


@define
class RunState:
    """The mutable state of one run."""

    context: Context
    initial_context: dict[str, Any]
    completed_nodes: list[str] = field(factory=list)
    node_outcomes: OutcomeMap = field(factory=OutcomeMap)
    node_retries: dict[str, int] = field(factory=dict)
    node_visits: int = 0
    loop_restarts: int = 0


@define
class Position:
    """Where the loop is about to go."""

    node_id: str
    edge: Edge | None = None
    previous: str | None = None
    resumed: bool = False


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
    ) -> None:
        self.registry = registry
        self.run_directory = run_directory
        self.clock = clock
        self.observers = tuple(observers)
        self.checkpoint_sinks = tuple(checkpoint_sinks)
        self.max_node_visits = max_node_visits
        self.rng = rng or random.Random()
        self.workspace_snapshot = workspace_snapshot

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
            stop: When set, the run stops before its next node (its checkpoint stays resumable).
            observers: Extra observers for this run only.
            on_context: Called with the run's Context whenever a new one is made (start, restart).

        Returns:
            How the run ended. Pipeline failures are results, not exceptions.
        """
        run = _Run(self, graph, session_id, logs_root, observers, stop, on_context)
        return run.execute(initial_context, resume_from)

    def iter_events(self, graph: Graph, **kwargs: Any) -> EventStream:
        """Run in a background thread and iterate over the events; `stream.result` at the end."""
        return EventStream(lambda observer: self.run(graph, observers=(observer,), **kwargs))

    def child(self, observers: Sequence[EventObserver]) -> PipelineEngine:
        """An engine for a supervised child run: same handlers and clock, no checkpoint sinks."""
        return PipelineEngine(
            self.registry,
            run_directory=self.run_directory,
            clock=self.clock,
            observers=observers,
            max_node_visits=self.max_node_visits,
            rng=self.rng,
        )


class _Run:
    """One run: the main loop plus the engine services handlers use (branches, child runs)."""

    def __init__(
        self,
        engine: PipelineEngine,
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
        self.on_context = on_context
        self.max_visits = engine.max_node_visits or graph.get_int("max_node_visits", DEFAULT_MAX_NODE_VISITS)
        self.executor = StageExecutor(
            registry=engine.registry,
            graph=graph,
            directory=self.directory,
            clock=engine.clock,
            rng=engine.rng,
            session_id=session_id,
            services=self,
            emit=self.emitter.emit,
        )
        self.branches = BranchWalker(self.graph, self.executor, self.clock, self.max_visits)
        self.state: RunState
        self.last_checkpoint: Checkpoint | None = None

    # engine services for handlers

    def run_branch(self, start: Edge, context: Context, **kwargs: Any) -> BranchResult:
        return self.branches.walk(start, context, **kwargs)

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
        forward = BranchForwarder(self.emitter, branch)
        child = self.engine.child((*observers, forward))
        return child.run(
            graph,
            session_id=self.session_id,
            logs_root=logs_root,
            initial_context=initial_context,
            stop=stop,
            on_context=context_ready,
        )

    # the run

    def execute(self, initial: Mapping[str, Any] | None, resume_from: Checkpoint | None) -> RunResult:
        started = self.clock.monotonic()
        try:
            if resume_from is not None:
                position_or_end = self._resume(resume_from, initial)
            else:
                position_or_end = self._start(initial or {})
            finish = position_or_end if isinstance(position_or_end, Finish) else self._loop(position_or_end)
        except CheckpointSaveError as error:
            finish = Finish(RunStatus.FAIL, str(error))
        return self._result(finish, started)

    def _fresh_context(self, initial: Mapping[str, Any]) -> Context:
        context = Context({f"graph.{key}": value for key, value in self.graph.attrs.items()})
        context.apply_updates(initial)
        if self.on_context is not None:
            self.on_context(context)
        return context

    def _start(self, initial: Mapping[str, Any]) -> Position | Finish:
        self.state = RunState(self._fresh_context(initial), dict(initial))
        start = self.graph.start_node()
        self.directory.write_manifest(
            RunManifest(
                session_id=self.session_id,
                pipeline=self.graph.name,
                goal=self.graph.goal,
                label=self.graph.label,
                source_path=os.path.abspath(self.graph.source_path) if self.graph.source_path else None,
                logs_root=self.directory.root,
                started_at=self.clock.now(),
                initial_context=initial,
            )
        )
        self._emit_started(start.id if start else "", resumed=False)
        if start is None:
            return Finish(RunStatus.FAIL, "the pipeline needs exactly one start node (shape=Mdiamond)")
        self._save("", start.id)
        return Position(start.id)

    def _resume(self, checkpoint: Checkpoint, initial: Mapping[str, Any] | None) -> Position | Finish:
        manifest = self.directory.read_manifest()
        if initial is None:
            initial = manifest.initial_context if manifest is not None else {}
        context = Context(checkpoint.context, list(checkpoint.logs))
        if self.on_context is not None:
            self.on_context(context)
        self.state = RunState(
            context,
            dict(initial),
            list(checkpoint.completed_nodes),
            checkpoint.node_outcomes,
            dict(checkpoint.node_retries),
            checkpoint.node_visits,
            checkpoint.loop_restarts,
        )
        self.last_checkpoint = checkpoint
        if manifest is not None:
            self.directory.write_manifest(evolve(manifest, resumed_at=(*manifest.resumed_at, self.clock.now())))
        self._emit_started(checkpoint.next_node or checkpoint.current_node, resumed=True)
        if checkpoint.finished or checkpoint.next_node is None:
            status = RunStatus.FAIL if checkpoint.status is RunStatus.FAIL else RunStatus.SUCCESS
            return Finish(status, checkpoint.failure_reason)
        return Position(
            checkpoint.next_node,
            self._incoming_edge(checkpoint),
            checkpoint.current_node or None,
            resumed=True,
        )

    def _incoming_edge(self, checkpoint: Checkpoint) -> Edge | None:
        """The edge a resumed run arrives by: the one routing picks again from the last node, if it
        leads to the checkpoint's next node (jumps have none)."""
        node = self.graph.nodes.get(checkpoint.current_node)
        if node is None:
            return None
        outcome = checkpoint.node_outcomes.get(node.id, Outcome(StageStatus.SKIPPED))
        try:
            selected = select_edge(self.graph.outgoing(node.id), outcome, self.state.context)
        except OrchestraError:
            return None
        return selected.edge if selected is not None and selected.edge.target == checkpoint.next_node else None

    def _emit_started(self, start_node: str, *, resumed: bool) -> None:
        self.emitter.emit(
            PipelineStarted,
            None,
            {
                "name": self.graph.name,
                "goal": self.graph.goal,
                "logs_root": self.directory.root,
                "start_node": start_node,
                "resumed": resumed,
            },
        )

    def _loop(self, position: Position) -> Finish:
        while True:
            if self.stop.is_set():
                return Finish(RunStatus.FAIL, f"stopped before node {position.node_id}")
            node = self.graph.nodes.get(position.node_id)
            if node is None:
                return Finish(RunStatus.FAIL, f"node {position.node_id!r} is not in the pipeline")
            if self.graph.is_exit(node):
                gate = exit_transition(self.graph, self.state.node_outcomes)
                if gate is not None:
                    if isinstance(gate, Finish):
                        self._save_final(gate)
                        return gate
                    position = self._jump_for_gate(gate, position)
                    continue
            if self.state.node_visits >= self.max_visits:
                return Finish(RunStatus.FAIL, self._looping_message())
            transition = self._step(node, position)
            if isinstance(transition, Finish):
                return transition
            position = self._advance(node, transition)

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
        )
        run = self.executor.execute(node, state.context, visit)
        if node.handler_type == "parallel":
            self._merge_branches(node)
        self._record(node, run.outcome, run.attempts)
        transition = self._transition(node, run.outcome)
        if isinstance(transition, Restart):
            return transition
        if isinstance(transition, Finish):
            self._save(node.id, None, transition)
        else:
            self._save(node.id, transition.target)
        return transition

    def _transition(self, node: Node, outcome: Outcome) -> Transition:
        try:
            transition = next_transition(self.graph, node, outcome, self.state.context)
        except OrchestraError as error:
            return Finish(RunStatus.FAIL, f"cannot route from {node.id}: {error}")
        if isinstance(transition, Finish) and transition.status is RunStatus.SUCCESS and not self.graph.is_exit(node):
            return exit_transition(self.graph, self.state.node_outcomes) or transition
        return transition

    def _record(self, node: Node, outcome: Outcome, attempts: int) -> None:
        state = self.state
        if outcome.status is not StageStatus.SKIPPED:
            state.completed_nodes.append(node.id)
            state.node_outcomes = state.node_outcomes.with_outcome(node.id, outcome)
        if attempts > 1:
            state.node_retries[node.id] = attempts - 1
        else:
            state.node_retries.pop(node.id, None)
        apply_outcome(state.context, outcome)

    def _merge_branches(self, node: Node) -> None:
        for result in self.branches.take_results(None, node):
            for node_id in result.completed_nodes:
                self.state.completed_nodes.append(node_id)
            for node_id, outcome in result.node_outcomes.items():
                self.state.node_outcomes = self.state.node_outcomes.with_outcome(node_id, outcome)

    def _advance(self, node: Node, transition: Advance | Restart) -> Position:
        if isinstance(transition, Restart):
            return self._restart(node, transition)
        label = transition.edge.label if transition.edge else ""
        fields = {"source": node.id, "target": transition.target, "label": label, "reason": transition.reason}
        self.emitter.emit(EdgeSelected, None, fields)
        return Position(transition.target, transition.edge, node.id)

    def _jump_for_gate(self, gate: Advance, position: Position) -> Position:
        failed = next(
            node_id
            for node_id, outcome in self.state.node_outcomes.items()
            if self.graph.nodes.get(node_id) is not None
            and self.graph.nodes[node_id].goal_gate
            and not outcome.status.is_success
        )
        status = self.state.node_outcomes[failed].status.value
        self.emitter.emit(GoalGateUnsatisfied, None, {"node_id": failed, "status": status, "retry_target": gate.target})
        fields = {"source": position.node_id, "target": gate.target, "label": "", "reason": gate.reason}
        self.emitter.emit(EdgeSelected, None, fields)
        return Position(gate.target, None, position.previous)

    def _restart(self, node: Node, restart: Restart) -> Position:
        state = self.state
        state.loop_restarts += 1
        self.directory.archive_stages(str(state.loop_restarts))
        state.context = self._fresh_context(state.initial_context)
        state.context.set("internal.loop_restart_count", state.loop_restarts)
        state.completed_nodes = []
        state.node_outcomes = OutcomeMap()
        state.node_retries = {}
        fields = {"node_id": restart.target, "from_node": node.id, "restart_count": state.loop_restarts}
        self.emitter.emit(PipelineRestarted, None, fields)
        self._save("", restart.target)
        return Position(restart.target, restart.edge, None)

    def _looping_message(self) -> str:
        recent = ", ".join(self.state.completed_nodes[-8:])
        return (
            f"stopped after {self.max_visits} node visits without reaching an exit (max_node_visits); "
            f"the last nodes were: {recent}. Look for a loop whose exit condition never holds, or raise "
            "the limit with --max-visits or the graph attribute max_node_visits"
        )

    # checkpoints and the end

    def _save_final(self, finish: Finish) -> None:
        current = self.state.completed_nodes[-1] if self.state.completed_nodes else ""
        self._save(current, None, finish)

    def _save(self, current: str, next_node: str | None, finish: Finish | None = None) -> None:
        state = self.state
        checkpoint = Checkpoint(
            current_node=current,
            completed_nodes=tuple(state.completed_nodes),
            node_outcomes=state.node_outcomes,
            node_retries=state.node_retries,
            context=state.context.snapshot(),
            timestamp=self.clock.now(),
            next_node=next_node,
            status=finish.status if finish else RunStatus.RUNNING,
            failure_reason=finish.reason if finish else "",
            logs=tuple(state.context.logs),
            workspace_snapshot=self.engine.workspace_snapshot() if self.engine.workspace_snapshot else {},
            node_visits=state.node_visits,
            loop_restarts=state.loop_restarts,
        )
        targets: list[tuple[str, Callable[[Checkpoint], None]]] = [
            (f"the run directory {self.directory.root}", self.directory.save_checkpoint),
            *((f"checkpoint sink {sink!r}", sink.save) for sink in self.engine.checkpoint_sinks),
        ]
        for name, save in targets:
            try:
                save(checkpoint)
            except Exception as error:
                raise CheckpointSaveError(f"could not save the checkpoint after {current or 'start'} to {name}: {error}") from error
        self.emitter.emit(CheckpointSaved, None, {"node_id": current, "checkpoint": checkpoint})
        self.last_checkpoint = checkpoint

    def _result(self, finish: Finish, started: float) -> RunResult:
        duration = self.clock.monotonic() - started
        state = self.state
        if finish.status is RunStatus.SUCCESS:
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

