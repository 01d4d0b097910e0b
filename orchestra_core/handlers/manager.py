"""The stack.manager_loop handler (Attractor 4.11): supervise a child pipeline run, or watch the context.

The child (`stack.child_dotfile` on the node or the graph, relative to the parent pipeline's file) runs
with its own engine in a thread, its logs under `<manager stage dir>/child/`, its events forwarded under
the branch `<manager>.child`. Each cycle the manager observes it into `stack.child.*` keys, steers it,
checks how it ended and the stop condition, then waits for the child's next node to finish or the poll
interval (default 45s), whichever comes first. After the last cycle (default 1000) it stops the child
and fails. `manager.actions` lists what a cycle does (default `observe,wait`; add `steer`). Steering
copies the parent's `stack.steer.*` context values into the child's context, at most once per
`manager.steer_cooldown`. With no child (no `stack.child_dotfile`, or `stack.child_autostart=false`)
each cycle only checks the stop condition against the context, then waits.

Settings take Orchestra's names first, then the names other Attractor runners use: `manager.max_cycles`
else `max_cycles`; `manager.poll_interval` (a duration) else `wait_ms` (milliseconds). The loop stops with
success when `manager.stop_condition` holds or the context value named by `stop_condition_key` is truthy.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from typing import Any

from attrs import frozen

from orchestra_core.engine.execution import StageCrashed
from orchestra_core.engine.stage import StageRun
from orchestra_core.graph.dot_loader import load_pipeline
from orchestra_core.model.conditions import Condition, parse_condition
from orchestra_core.model.context import Context
from orchestra_core.model.events import (
    BudgetExceeded,
    EngineEvent,
    PipelineCompleted,
    PipelineFailed,
    StageCompleted,
    StageFailed,
    StageStarted,
)
from orchestra_core.model.graph import Graph, Node
from orchestra_core.model.outcome import Outcome

PipelineLoader = Callable[[str], Graph]
STEER_PREFIX = "stack.steer."
DEFAULT_MAX_CYCLES = 1000
DEFAULT_POLL_INTERVAL_S = 45.0
_TRUTHY = frozenset({"true", "1", "yes"})


@frozen
class ManagerSettings:
    """What one manager loop does, resolved from the node's attributes."""

    max_cycles: int
    max_cycles_key: str  # the attribute that set it, for messages
    poll_interval: float
    stop_condition: Condition | None
    stop_key: str
    actions: frozenset[str]

    def stop_reason(self, context: dict[str, Any], outcome: str) -> str | None:
        """Why the loop stops now (None while it goes on): the stop condition holds or the stop key is truthy."""
        if self.stop_condition is not None and self.stop_condition.evaluate(outcome=outcome, context=context):
            return "Stop condition satisfied"
        if self.stop_key and is_truthy(context.get(self.stop_key)):
            return f"Stop key {self.stop_key} is set"
        return None

    def exhausted(self, what: str) -> str:
        """The failure reason once every cycle ran."""
        return f"manager loop exceeded {self.max_cycles_key}={self.max_cycles}: {what}"


def is_truthy(value: Any) -> bool:
    """A context value that says yes: true, a non-zero number, or the text true/1/yes (any case)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return value != 0
    return isinstance(value, str) and value.strip().lower() in _TRUTHY


def manager_settings(node: Node) -> ManagerSettings:
    """The loop's settings; Orchestra's `manager.*` names win over `max_cycles` / `wait_ms`.

    Raises:
        AttributeValueError: A setting is malformed.
        ConditionSyntaxError: `manager.stop_condition` does not parse.
    """
    key = "manager.max_cycles" if node.attrs.get("manager.max_cycles") else "max_cycles"
    max_cycles = max(node.get_int(key, DEFAULT_MAX_CYCLES), 1)
    if node.attrs.get("manager.poll_interval") or not node.attrs.get("wait_ms"):
        poll = node.get_duration("manager.poll_interval", DEFAULT_POLL_INTERVAL_S)
    else:
        poll = max(node.get_int("wait_ms", 0), 0) / 1000
    stop_text = node.get("manager.stop_condition").strip()
    return ManagerSettings(
        max_cycles=max_cycles,
        max_cycles_key=key,
        poll_interval=poll,
        stop_condition=parse_condition(stop_text) if stop_text else None,
        stop_key=node.get("stop_condition_key").strip(),
        actions=frozenset(node.get_list("manager.actions") or ("observe", "wait")),
    )


class ChildMonitor:
    """Observes a child run's main-line events; `wait_for_change` wakes on each finished node."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self.version = 0
        self.status = "starting"
        self.outcome = ""
        self.current_node = ""
        self.last_stage = ""
        self.last_outcome = ""
        self.completed: list[str] = []
        self.failure_reason = ""

    def on_event(self, event: EngineEvent) -> None:
        if event.branch is not None:
            return
        with self._changed:
            if isinstance(event, StageStarted):
                self.status, self.current_node = "running", event.node_id
                return
            if isinstance(event, StageCompleted | StageFailed):
                if isinstance(event, StageFailed) and event.will_retry:
                    return
                self.last_stage, self.last_outcome = event.node_id, event.outcome.status.value
                self.completed.append(event.node_id)
            elif isinstance(event, PipelineCompleted):
                self.status, self.outcome = "completed", "success"
            elif isinstance(event, PipelineFailed):
                self.status, self.outcome, self.failure_reason = "failed", "fail", event.error
            elif isinstance(event, BudgetExceeded):  # the session's budget stopped the child too
                self.status, self.outcome, self.failure_reason = "failed", "fail", event.message
            else:
                return
            self.version += 1
            self._changed.notify_all()

    def crashed(self, error: BaseException) -> None:
        """The child run raised instead of ending."""
        with self._changed:
            self.status, self.outcome, self.failure_reason = "failed", "fail", f"child run crashed: {error}"
            self.version += 1
            self._changed.notify_all()

    def wait_for_change(self, since: int, timeout: float) -> None:
        """Block until the child reports progress after version `since`, or `timeout` seconds pass."""
        with self._changed:
            self._changed.wait_for(lambda: self.version != since or self.finished, timeout)

    @property
    def finished(self) -> bool:
        return self.status in ("completed", "failed")

    def observation(self, cycle: int) -> dict[str, Any]:
        """The `stack.child.*` context values."""
        with self._changed:
            return {
                "stack.child.status": self.status,
                "stack.child.outcome": self.outcome,
                "stack.child.current_node": self.current_node,
                "stack.child.last_stage": self.last_stage,
                "stack.child.last_outcome": self.last_outcome,
                "stack.child.completed_nodes": list(self.completed),
                "stack.child.completed_count": len(self.completed),
                "stack.child.failure_reason": self.failure_reason,
                "stack.child.cycle": cycle,
            }


class ManagerLoopHandler:
    """Runs and supervises a child pipeline; without one, watches the context for its stop condition.

    Args:
        pipeline_loader: Loads the child pipeline file (the CLI passes one that also transforms and
            validates it); default: plain DOT loading.
    """

    def __init__(self, pipeline_loader: PipelineLoader | None = None) -> None:
        self.pipeline_loader = pipeline_loader or (lambda path: load_pipeline(path))

    def execute(self, node: Node, context: Context, graph: Graph, stage: StageRun) -> Outcome:
        settings = manager_settings(node)
        dotfile = node.get("stack.child_dotfile") or graph.stack_child_dotfile
        if not dotfile or not node.get_bool("stack.child_autostart", True):
            if settings.stop_condition is None and not settings.stop_key:
                return Outcome.fail(
                    "the manager loop has no child to supervise (no stack.child_dotfile, or stack.child_autostart=false) "
                    "and nothing to stop on (set manager.stop_condition or stop_condition_key)"
                )
            return _ContextWatch(node, context, stage, settings).run()
        base = os.path.dirname(graph.source_path) if graph.source_path else "."
        child_graph = self.pipeline_loader(os.path.join(base, dotfile))
        return _Supervision(node, context, stage, child_graph, settings).run()


class _ContextWatch:
    """A manager loop without a child: each cycle checks the stop condition against the context, then waits."""

    def __init__(self, node: Node, context: Context, stage: StageRun, settings: ManagerSettings) -> None:
        self.node = node
        self.context = context
        self.stage = stage
        self.settings = settings

    def run(self) -> Outcome:
        for cycle in range(1, self.settings.max_cycles + 1):
            if self.stage.cancel.is_set() or self.stage.engine.stop.is_set():
                return Outcome.fail("the manager was cancelled (its node timed out or the run is stopping)")
            view = self.context.snapshot()
            reason = self.settings.stop_reason(view, str(view.get("outcome", "")))
            if reason is not None:
                return Outcome.success(f"{reason} (cycle {cycle})")
            if "wait" in self.settings.actions and cycle < self.settings.max_cycles:
                self.stage.cancel.wait(self.settings.poll_interval)
        return Outcome.fail(self.settings.exhausted(self._awaited()))

    def _awaited(self) -> str:
        watched = [
            "manager.stop_condition" if self.settings.stop_condition else "",
            f"stop_condition_key={self.settings.stop_key}" if self.settings.stop_key else "",
        ]
        return f"{' or '.join(filter(None, watched))} never held (no child: the loop watched the context)"


class _Supervision:
    """One manager loop over one child run."""

    def __init__(self, node: Node, context: Context, stage: StageRun, child: Graph, settings: ManagerSettings) -> None:
        self.node = node
        self.parent = context
        self.stage = stage
        self.child = child
        self.settings = settings
        self.monitor = ChildMonitor()
        self.stop = threading.Event()
        self.child_context: Context | None = None
        self.last_steer: float | None = None
        self.crash: StageCrashed | None = None

    def run(self) -> Outcome:
        worker = threading.Thread(target=self._run_child, name=f"orchestra-child-{self.node.id}", daemon=True)
        worker.start()
        observed: dict[str, Any] = {}
        try:
            for cycle in range(1, self.settings.max_cycles + 1):
                if self.stage.cancel.is_set():
                    return Outcome.fail("the manager was cancelled (its node timed out)", context_updates=observed)
                version = self.monitor.version
                if "steer" in self.settings.actions:
                    self._steer()
                snapshot = self.monitor.observation(cycle)
                observed = snapshot if "observe" in self.settings.actions else {}
                decided = self._decide(snapshot, observed)
                if decided is not None:
                    return decided
                if "wait" in self.settings.actions:
                    self.monitor.wait_for_change(version, self.settings.poll_interval)
            reason = self.settings.exhausted(f"child still running after {self.settings.max_cycles} cycles")
            return Outcome.fail(reason, context_updates=observed)
        finally:
            self.stop.set()
            worker.join()
            if self.crash is not None:
                raise self.crash  # a bug in the child ends the run, whatever the loop decided

    def _run_child(self) -> None:
        try:
            self.stage.engine.run_child(
                self.child,
                logs_root=os.path.join(self.stage.stage_dir, "child"),
                initial_context=self._steering_values() if "steer" in self.settings.actions else {},
                observers=(self.monitor,),
                stop=self.stop,
                context_ready=self._context_ready,
                branch=f"{self.stage.branch + '/' if self.stage.branch else ''}{self.node.id}.child",
            )
        except Exception as error:  # reported as a failed child, never lost in the thread
            if isinstance(error, StageCrashed):  # a bug: raised again by `run`, it ends the run (not retried)
                self.crash = error
            self.monitor.crashed(error)

    def _context_ready(self, context: Context) -> None:
        self.child_context = context

    def _steering_values(self) -> dict[str, Any]:
        return {key: self.parent.get(key) for key in self.parent if key.startswith(STEER_PREFIX)}

    def _steer(self) -> None:
        cooldown = self.node.get_duration("manager.steer_cooldown", 0.0)
        now = self.stage.engine.clock.monotonic()
        if self.child_context is None or (self.last_steer is not None and now - self.last_steer < cooldown):
            return
        self.child_context.apply_updates(self._steering_values())
        self.last_steer = now

    def _decide(self, snapshot: Mapping[str, Any], observed: Mapping[str, Any]) -> Outcome | None:
        """Spec order: how the child ended, then the stop condition and stop key (over the parent context plus
        the observation; `outcome` is the child's last stage status)."""
        status = snapshot["stack.child.status"]
        if status == "completed":
            return Outcome.success("Child completed", context_updates=dict(observed))
        if status == "failed":
            return Outcome.fail(f"Child failed: {snapshot['stack.child.failure_reason']}", context_updates=dict(observed))
        view = {**self.parent.snapshot(), **snapshot}
        stopped = self.settings.stop_reason(view, snapshot["stack.child.last_outcome"])
        if stopped is not None:
            return Outcome.success(stopped, context_updates=dict(observed))
        return None
