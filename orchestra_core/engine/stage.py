"""What a handler gets besides node, context and graph: the StageRun, and the Handler protocol itself."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from attrs import field, frozen

from orchestra_core.engine.branch_workspaces import BranchWorkspaces
from orchestra_core.model.cancellation import Cancellation
from orchestra_core.model.checkpoint import RunResult
from orchestra_core.model.context import Context
from orchestra_core.model.events import EngineEvent, EventObserver
from orchestra_core.model.graph import Edge, Graph, Node
from orchestra_core.model.immutable import str_tuple
from orchestra_core.model.outcome import Outcome
from orchestra_core.ports.artifact_store import ArtifactStore
from orchestra_core.ports.clock import Clock
from orchestra_core.ports.run_directory import RunDirectory


@frozen
class BranchResult:
    """How one parallel branch ended.

    Attributes:
        branch_id: The branch's start node.
        status: The branch's final status (`skipped` when it was cancelled before finishing).
        outcome: The last outcome in the branch (None when it never ran a node).
        last_node: The last node it ran.
        completed_nodes: The nodes it ran, in order.
        node_outcomes: Their latest outcomes.
        context_changes: Context values the branch added or changed, relative to the fan-out.
        duration_s: Wall time of the branch.
    """

    branch_id: str
    status: str
    outcome: Outcome | None
    last_node: str | None
    completed_nodes: tuple[str, ...] = field(converter=str_tuple)
    node_outcomes: Mapping[str, Outcome] = field(factory=dict)
    context_changes: Mapping[str, Any] = field(factory=dict)
    duration_s: float = 0.0

    @property
    def failure_reason(self) -> str:
        return self.outcome.failure_reason if self.outcome else ""


class EngineServices(Protocol):
    """What the running engine offers handlers that run nodes themselves (parallel, manager loop).

    Attributes:
        clock: The engine's clock.
        stop: Set when the run is asked to stop; a long-running handler may check it to end early.
        workspaces: Gives parallel branches their own workspaces and joins them (a no-op without one).
    """

    clock: Clock
    stop: threading.Event
    workspaces: BranchWorkspaces

    def run_branch(
        self,
        start: Edge,
        context: Context,
        *,
        branch: str,
        stop_at: str | None,
        stage_keys: Mapping[str, str],
        cancel: threading.Event,
    ) -> BranchResult:
        """Run nodes from `start.target` on `context` until `stop_at`, an exit node or a dead end."""
        ...

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
        """Run a whole child pipeline with its own run directory and no checkpoint sinks; its events
        reach this run's observers under `branch`."""
        ...


@frozen
class StageRun:
    """The stage being executed: where its files go, which attempt it is, how it was reached.

    Attributes:
        session_id: The run's session.
        logs_root: The run directory.
        stage_key: The stage's key in the run directory (the node id; `node@branch` for a node more than
            one parallel branch runs).
        attempt: 1 for the first attempt.
        max_attempts: How many attempts the retry policy allows.
        incoming_edge: The edge that led here (None for the start node and for jumps).
        previous_node: The node that ran before (None for the first).
        fidelity: The resolved fidelity mode (already degraded after a resume).
        thread_key: The LLM session key for `full` fidelity.
        resumed: Whether this is the first node after a resume.
        timeout: The node's timeout in seconds (handlers that run subprocesses pass it down).
        branch: The parallel branch path (None on the main line).
        directory: The run directory.
        engine: Engine services for handlers that run nodes themselves.
        completed_nodes: The nodes finished before this one (read-only).
        node_outcomes: Their latest outcomes (read-only).
        emit_event: Emits an event (use `emit`).
        cancel: Cancelled by the engine when the attempt ran out of time, before any retry starts: handlers
            pass it to the ports they call (`CommandRunner.run`, `CodergenBackend.run`), which stop their
            work (kill its process group, stop the agent loop); handlers that run nodes themselves (parallel,
            manager loop) stop them at their next node boundary (see `orchestra_core.model.cancellation`).
    """

    session_id: str
    logs_root: str
    stage_key: str
    attempt: int
    max_attempts: int
    incoming_edge: Edge | None
    previous_node: str | None
    fidelity: str
    thread_key: str
    resumed: bool
    timeout: float | None
    branch: str | None
    directory: RunDirectory
    engine: EngineServices
    completed_nodes: Sequence[str]
    node_outcomes: Mapping[str, Outcome]
    emit_event: Callable[[type[EngineEvent], dict[str, Any]], None]
    cancel: Cancellation = field(factory=Cancellation)

    @property
    def artifacts(self) -> ArtifactStore:
        return self.directory.artifacts

    @property
    def stage_dir(self) -> str:
        """The stage directory (created on first use)."""
        return self.directory.stage_dir(self.stage_key)

    def emit(self, event_type: type[EngineEvent], **fields: Any) -> None:
        """Emit an event; session, time and branch are filled in."""
        self.emit_event(event_type, fields)

    def write(self, name: str, text: str) -> None:
        """Write a file in the stage directory."""
        self.directory.write_stage_file(self.stage_key, name, text)

    def read(self, name: str) -> str | None:
        """A file of the stage directory, None when absent."""
        return self.directory.read_stage_file(self.stage_key, name)


@runtime_checkable
class Handler(Protocol):
    """Executes one node (Attractor 4.1).

    Return an Outcome, or None to mean "this handler reports no status": then a `status.json` the stage
    wrote decides, else `auto_status=true` makes it SUCCESS, else it is a FAIL. Exceptions become FAIL
    outcomes (retried when `is_retryable`). A handler that enforces the node timeout itself (it passes
    `stage.timeout` to a subprocess) sets the class attribute `enforces_timeout = True`.
    """

    def execute(self, node: Node, context: Context, graph: Graph, stage: StageRun) -> Outcome | None:
        """Run the node."""
        ...
