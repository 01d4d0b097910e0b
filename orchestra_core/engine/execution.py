"""Running one node: handler dispatch, retries with backoff, timeout, the status-file contract, events."""

from __future__ import annotations

import json
import random
import threading
import traceback
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from attrs import evolve, frozen

from orchestra_core.engine.fidelity import effective_fidelity, resolve_fidelity, resolve_thread_key
from orchestra_core.engine.join_outcome import pending_join_at
from orchestra_core.engine.retry import RetryPolicy, build_retry_policy, is_programming_error, is_retryable
from orchestra_core.engine.stage import EngineServices, Handler, StageRun
from orchestra_core.model.budget import BudgetGuard, BudgetVerdict
from orchestra_core.model.cancellation import Cancellation, cancellation_scope, linked
from orchestra_core.model.context import Context
from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.events import EngineEvent, StageCompleted, StageFailed, StageRetrying, StageStarted
from orchestra_core.model.graph import Edge, Graph, Node
from orchestra_core.model.outcome import Outcome, StageStatus
from orchestra_core.model.values import format_duration
from orchestra_core.ports.clock import Clock
from orchestra_core.ports.run_directory import STATUS_FILE, RunDirectory

Emit = Callable[[type[EngineEvent], str | None, dict[str, Any]], None]
TIMEOUT_GRACE_S = 2.0  # extra wait for handlers that enforce the timeout themselves
CANCEL_WAIT_S = 30.0  # how long a cancelled attempt may take to stop before its node fails without a retry
_DONE = (StageStatus.SUCCESS, StageStatus.PARTIAL_SUCCESS, StageStatus.SKIPPED)
_STATUS_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str)
TRACEBACK_FILE = "traceback.txt"
# The notes of an outcome auto_status made up (as other Attractor runners word it); no status.json is written for it.
AUTO_STATUS_NOTE = "auto_status synthesized success"


def auto_status_outcome(detail: str = "", context_updates: Mapping[str, Any] | None = None) -> Outcome:
    """The SUCCESS that `auto_status=true` stands in for a status nobody reported (`detail`: what happened)."""
    notes = f"{AUTO_STATUS_NOTE} ({detail})" if detail else AUTO_STATUS_NOTE
    return Outcome.success(notes, context_updates=dict(context_updates or {}))


def is_auto_status(node: Node, outcome: Outcome) -> bool:
    """Whether the outcome was synthesized by auto_status (then the stage has no status.json, as elsewhere)."""
    return node.auto_status and outcome.status is StageStatus.SUCCESS and outcome.notes.startswith(AUTO_STATUS_NOTE)


class HandlerResolver(Protocol):
    """Anything that maps a node to its handler (the HandlerRegistry)."""

    def resolve(self, node: Node) -> Handler:
        """The node's handler."""
        ...


@frozen
class StageVisit:
    """How the engine reached a node: the inputs of one node execution besides node and context."""

    index: int
    branch: str | None
    incoming_edge: Edge | None
    previous_node: str | None
    resumed: bool
    stage_key: str
    completed_nodes: Sequence[str]
    node_outcomes: Mapping[str, Outcome]
    cancel: threading.Event | None = None  # the enclosing fan-out's: cancelling it cancels this node's attempt
    max_attempts: int | None = None  # at most this many attempts, whatever the node's retry policy says


@frozen
class NodeRun:
    """The final outcome of one node execution, after retries; `stopped`: why the session's budget stopped it
    before it ended (no outcome was recorded for it: a resume runs it again)."""

    outcome: Outcome
    attempts: int
    duration_s: float
    stopped: str | None = None


class StageExecutor:
    """Executes nodes for one run; shared by the main line and parallel branches (thread-safe)."""

    def __init__(
        self,
        *,
        registry: HandlerResolver,
        graph: Graph,
        directory: RunDirectory,
        clock: Clock,
        rng: random.Random,
        session_id: str,
        services: EngineServices,
        emit: Emit,
        budget: BudgetGuard | None = None,
    ) -> None:
        self._registry = registry
        self._budget = budget
        self._stops_lock = threading.Lock()
        self.budget_stops = 0  # node executions the session's budget stopped (main line and branches)
        self._graph = graph
        self._directory = directory
        self._clock = clock
        self._rng = rng
        self._session_id = session_id
        self._services = services
        self._emit = emit

    def execute(self, node: Node, context: Context, visit: StageVisit) -> NodeRun:
        """Run a node with its retry policy; write its final `status.json`; emit stage events.

        A join node whose fan-out's merge conflicted takes that as its outcome instead (see `join_outcome`).
        """
        started = self._clock.monotonic()
        handler_type = node.handler_type
        base = {"node_id": node.id, "handler_type": handler_type, "index": visit.index}
        self._emit(StageStarted, visit.branch, {**base, "attempt": 1})
        conflict = pending_join_at(context, node.id, visit.branch)
        if conflict is not None:
            context.set("current_node", node.id)
            return self._finish(node, visit, base, conflict.outcome(), 1, started)
        try:
            handler = self._registry.resolve(node)
            policy = build_retry_policy(node, self._graph)
            if visit.max_attempts is not None:  # a worker runs one attempt its session's runner asked for
                policy = evolve(policy, max_attempts=min(policy.max_attempts, visit.max_attempts))
            timeout = node.timeout
        except OrchestraError as error:
            return self._finish(node, visit, base, Outcome.fail(str(error)), 1, started)
        fidelity = effective_fidelity(
            resolve_fidelity(node, self._graph, visit.incoming_edge), first_after_resume=visit.resumed
        )
        thread_key = resolve_thread_key(node, self._graph, visit.incoming_edge, visit.previous_node)
        self._prepare_context(node, context, visit, fidelity, thread_key)
        own_budget = self._node_budget(node)
        if own_budget is not None:  # the node's own budget is spent already (earlier visits): it fails at once
            return self._finish(node, visit, base, Outcome.fail(own_budget.message), 1, started)
        attempt = 1
        while True:
            stage = self._stage(visit, attempt, policy, fidelity, thread_key, timeout)
            outcome, retryable = self._attempt(handler, node, context, stage, visit.cancel)
            turn_stop = stage.cancel.turn_stop
            if turn_stop is not None and outcome.status not in _DONE:  # stopped at a turn boundary by a budget
                if not turn_stop.fails_node:
                    return self._stopped(outcome, attempt, started, turn_stop.reason)
                outcome, retryable = Outcome.fail(turn_stop.reason), False
            if outcome.status in _DONE:
                break
            cancelled = isinstance(visit.cancel, Cancellation) and visit.cancel.stops_running_work
            if attempt >= policy.max_attempts or not retryable or cancelled:  # a cancelled node is not retried
                outcome = _exhausted(node, outcome, attempt, policy)
                break
            session = self.budget_stop()
            if session is not None:  # no retry once the session's budget is reached
                return self._stopped(outcome, attempt, started, session.message)
            own_budget = self._node_budget(node)
            if own_budget is not None:
                outcome = Outcome.fail(own_budget.message)
                break
            delay = policy.backoff.delay_for_attempt(attempt, self._rng)
            elapsed = self._clock.monotonic() - started
            self._emit(StageFailed, visit.branch, {**base, "outcome": outcome, "attempts": attempt,
                                                   "duration_s": elapsed, "will_retry": True})
            self._emit(StageRetrying, visit.branch, {**base, "attempt": attempt + 1, "delay_s": delay,
                                                     "reason": outcome.failure_reason})
            context.set(f"internal.retry_count.{node.id}", attempt)
            self._clock.sleep(delay)
            attempt += 1
        return self._finish(node, visit, base, outcome, attempt, started)

    def budget_stop(self) -> BudgetVerdict | None:
        """The session's budget, when it is reached: counted as a stop (nothing new may start)."""
        verdict = self._budget.session_stop() if self._budget is not None else None
        if verdict is not None:
            with self._stops_lock:
                self.budget_stops += 1
        return verdict

    def _node_budget(self, node: Node) -> BudgetVerdict | None:
        return self._budget.node_stop(node.id) if self._budget is not None else None

    def _stopped(self, outcome: Outcome, attempts: int, started: float, reason: str) -> NodeRun:
        """A node execution the session's budget stopped: no final outcome is written or recorded for it."""
        with self._stops_lock:
            self.budget_stops += 1
        return NodeRun(outcome, attempts, self._clock.monotonic() - started, stopped=reason)

    def _prepare_context(
        self, node: Node, context: Context, visit: StageVisit, fidelity: str, thread_key: str
    ) -> None:
        context.set("current_node", node.id)
        if node.handler_type == "codergen":
            context.apply_updates(
                {
                    "internal.fidelity": fidelity,
                    "internal.thread_key": thread_key,
                    "internal.session_id": self._session_id,
                    "internal.stage_dir": self._stage_dir_for_agent(node, visit.stage_key),
                    "internal.resumed": visit.resumed,
                }
            )

    def _stage_dir_for_agent(self, node: Node, stage_key: str) -> str:
        """The stage directory an agent's tool hooks are told about: created (and its files written) only for
        a node that has hooks, the one thing outside the engine that uses it while the node runs."""
        if any(self._graph.tool_hooks_for(node)):
            return self._directory.stage_dir(stage_key)
        return self._directory.stage_path(stage_key)

    def _stage(
        self, visit: StageVisit, attempt: int, policy: RetryPolicy, fidelity: str, thread_key: str,
        timeout: float | None,
    ) -> StageRun:
        branch = visit.branch
        return StageRun(
            session_id=self._session_id,
            logs_root=self._directory.root,
            stage_key=visit.stage_key,
            attempt=attempt,
            max_attempts=policy.max_attempts,
            incoming_edge=visit.incoming_edge,
            previous_node=visit.previous_node,
            fidelity=fidelity,
            thread_key=thread_key,
            resumed=visit.resumed,
            timeout=timeout,
            branch=branch,
            directory=self._directory,
            engine=self._services,
            completed_nodes=visit.completed_nodes,
            node_outcomes=visit.node_outcomes,
            emit_event=lambda event_type, fields: self._emit(event_type, branch, fields),
        )

    def _attempt(
        self, handler: Handler, node: Node, context: Context, stage: StageRun, parent_cancel: threading.Event | None
    ) -> tuple[Outcome, bool]:
        """One handler call; returns the outcome it amounts to and whether a failure may be retried.

        Raises:
            StageCrashed: The handler hit a programming error (see `is_programming_error`); its traceback is in
                the stage directory's `traceback.txt`. Such errors are not retried: they end the run.
        """
        self._directory.remove_stage_file(stage.stage_key, STATUS_FILE)
        try:
            with linked(parent_cancel, stage.cancel):
                returned = _call(handler, node, context, self._graph, stage)
        except StageCrashed:
            raise
        except Exception as error:  # the handler contract: exceptions become FAIL outcomes
            if is_programming_error(error):
                raise self._crashed(node, stage, error) from error
            return Outcome.fail(_describe(error)), is_retryable(error)
        if isinstance(returned, _TimedOut):
            took = format_duration(returned.seconds)
            if returned.stopped:
                return Outcome.fail(f"timed out after {took}; the attempt was cancelled"), True
            reason = (
                f"timed out after {took} and did not stop within {format_duration(CANCEL_WAIT_S)} of being "
                "cancelled; not retried while it may still be running"
            )
            return Outcome.fail(reason), False
        return self._reported(node, stage, returned), True

    def _crashed(self, node: Node, stage: StageRun, error: BaseException) -> StageCrashed:
        text = "".join(traceback.format_exception(error))
        where = f"{stage.stage_dir}/{TRACEBACK_FILE}"
        try:
            self._directory.write_stage_file(stage.stage_key, TRACEBACK_FILE, text)
        except Exception:  # the message still carries the error; the traceback goes with the exception
            where = "the exception"
        return StageCrashed(
            f"node {node.id}: a bug in Orchestra (or in a handler or backend): {_describe(error)} "
            f"(not retried; traceback in {where})"
        )

    def _reported(self, node: Node, stage: StageRun, returned: Outcome | None) -> Outcome:
        """Appendix C: a status.json the stage wrote decides (the handler's context updates still apply unless
        the file sets the same keys); then the handler's outcome; then auto_status."""
        text = self._directory.read_stage_file(stage.stage_key, STATUS_FILE)
        if text is not None:
            try:
                written = Outcome.from_status_json(json.loads(text))
            except ValueError as error:
                return Outcome.fail(f"{stage.stage_dir}/{STATUS_FILE} is malformed: {error}")
            if returned is None or not returned.context_updates:
                return written
            return evolve(written, context_updates={**returned.context_updates, **written.context_updates})
        if returned is not None:
            return returned
        if node.auto_status:
            return auto_status_outcome("the handler reported no status and the stage wrote no status.json")
        return Outcome.fail(
            "the handler reported no status and the stage wrote no status.json "
            "(set auto_status=true to count that as success)"
        )

    def _finish(
        self, node: Node, visit: StageVisit, base: dict[str, Any], outcome: Outcome, attempts: int, started: float
    ) -> NodeRun:
        if not is_auto_status(node, outcome):
            status_json = _STATUS_ENCODER.encode(outcome.to_status_json())
            self._directory.write_stage_file(visit.stage_key, STATUS_FILE, status_json + "\n")
        duration = self._clock.monotonic() - started
        fields = {**base, "outcome": outcome, "attempts": attempts, "duration_s": duration}
        if outcome.status is StageStatus.FAIL:
            self._emit(StageFailed, visit.branch, {**fields, "will_retry": False})
        else:
            self._emit(StageCompleted, visit.branch, fields)
        return NodeRun(outcome, attempts, duration)


def _exhausted(node: Node, outcome: Outcome, attempts: int, policy: RetryPolicy) -> Outcome:
    """The outcome once no attempt is left: RETRY becomes PARTIAL_SUCCESS (allow_partial) or FAIL."""
    if outcome.status is not StageStatus.RETRY:
        return outcome
    if node.allow_partial:
        notes = f"retries exhausted after {attempts} attempts, partial success accepted"
        return Outcome(StageStatus.PARTIAL_SUCCESS, outcome.preferred_label, outcome.suggested_next_ids,
                       outcome.context_updates, notes)
    reason = f"max retries exceeded ({attempts} of {policy.max_attempts} attempts)"
    if outcome.failure_reason:
        reason += f": {outcome.failure_reason}"
    return Outcome(StageStatus.FAIL, outcome.preferred_label, outcome.suggested_next_ids,
                   outcome.context_updates, outcome.notes, reason)


class StageCrashed(Exception):
    """A handler hit a programming error (AttributeError, TypeError, ...): the run ends at once, nothing retries."""


@frozen
class _TimedOut:
    seconds: float
    stopped: bool  # whether the cancelled attempt ended within CANCEL_WAIT_S


def _call(handler: Handler, node: Node, context: Context, graph: Graph, stage: StageRun) -> Outcome | _TimedOut | None:
    """Call the handler; with a node timeout, in a worker thread that is cancelled when time runs out.

    On timeout the stage's cancellation is set (the ports kill the attempt's process groups and stop its agent
    loop), then the engine waits up to CANCEL_WAIT_S for the attempt to end, so no retry starts while it still
    works; its late result is discarded.
    """
    if stage.timeout is None:
        with cancellation_scope(stage.cancel):
            return handler.execute(node, context, graph, stage)
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            with cancellation_scope(stage.cancel):
                box["outcome"] = handler.execute(node, context, graph, stage)
        except BaseException as error:  # handed back to the engine thread below
            box["error"] = error

    worker = threading.Thread(target=work, name=f"orchestra-stage-{node.id}", daemon=True)
    worker.start()
    grace = TIMEOUT_GRACE_S if getattr(handler, "enforces_timeout", False) else 0.0
    worker.join(stage.timeout + grace)
    if worker.is_alive():
        stage.cancel.cancel(f"node {node.id} timed out after {format_duration(stage.timeout)}")
        worker.join(CANCEL_WAIT_S)
        return _TimedOut(stage.timeout, stopped=not worker.is_alive())
    if "error" in box:
        raise box["error"]
    return box.get("outcome")


def _describe(error: BaseException) -> str:
    if isinstance(error, OrchestraError):
        return str(error)
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__


def apply_outcome(context: Context, outcome: Outcome) -> None:
    """Merge an outcome into the context: its updates, then `outcome` and `preferred_label` (5.1).

    A SKIPPED outcome only applies its updates: it records nothing.
    """
    if outcome.context_updates:
        context.apply_updates(outcome.context_updates)
    if outcome.status is not StageStatus.SKIPPED:
        context.apply_updates({"outcome": outcome.status.value, "preferred_label": outcome.preferred_label})
