"""Progress output for `orchestra run`: plain lines (no rich import) and the rich terminal view."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import IO, Any

from attrs import define

from orchestra_core.model.events import (
    BudgetExceeded,
    BudgetWarning,
    EngineEvent,
    GoalGateUnsatisfied,
    InterviewCompleted,
    InterviewStarted,
    InterviewTimeout,
    ModelFailedOver,
    ModelPriceUnknown,
    ParallelCompleted,
    ParallelStarted,
    PipelineCompleted,
    PipelineFailed,
    PipelineRestarted,
    PipelineStarted,
    StageCompleted,
    StageFailed,
    StageRetrying,
    StageStarted,
    StageWarning,
)
from orchestra_core.model.values import format_duration


def describe(event: EngineEvent) -> str | None:
    """A one-line description of an event for progress output (None for events not worth a line)."""
    prefix = f"[{event.branch}] " if event.branch else ""
    text: str | None = None
    if isinstance(event, PipelineStarted):
        verb = "resumed" if event.resumed else "started"
        text = f"pipeline {event.name} {verb}" + (f" at {event.start_node}" if event.resumed else "")
    elif isinstance(event, StageStarted):
        text = f"> {event.node_id} ({event.handler_type})"
    elif isinstance(event, StageCompleted):
        text = f"ok {event.node_id} {event.outcome.status.value} in {format_duration(event.duration_s, 'seconds')}"
        if event.attempts > 1:
            text += f" after {event.attempts} attempts"
    elif isinstance(event, StageFailed):
        verb = "attempt failed" if event.will_retry else "FAILED"
        text = f"x {event.node_id} {verb} in {format_duration(event.duration_s, 'seconds')}: {event.outcome.failure_reason}"
    elif isinstance(event, StageRetrying):
        text = f"~ {event.node_id} retrying (attempt {event.attempt}) in {format_duration(event.delay_s, 'seconds')}"
    elif isinstance(event, GoalGateUnsatisfied):
        status = f"{event.status}: {' '.join(event.reason.split())}" if event.reason else event.status
        text = f"! goal gate {event.node_id} is unsatisfied ({status}): back to {event.retry_target}"
    elif isinstance(event, PipelineRestarted):
        text = f"loop restart #{event.restart_count} from {event.from_node}: starting over at {event.node_id}"
    elif isinstance(event, ParallelStarted):
        text = f"|| {event.node_id}: {event.branch_count} branches ({', '.join(event.branch_ids)}), {event.join_policy}"
    elif isinstance(event, ParallelCompleted):
        text = f"|| {event.node_id}: {event.success_count} succeeded, {event.failure_count} failed in {format_duration(event.duration_s, 'seconds')}"
    elif isinstance(event, InterviewCompleted):
        text = f"? {event.question.stage}: answered {event.answer.text or event.answer.value}"
    elif isinstance(event, InterviewTimeout):
        text = f"? {event.stage}: no answer within the timeout"
    elif isinstance(event, StageWarning):
        text = f"! {event.node_id}: warning: {event.message}"
    elif isinstance(event, ModelFailedOver):
        text = f"! {event.node_id or 'commit message'}: model failover: {event.failover.describe()}"
    elif isinstance(event, PipelineCompleted):
        text = f"pipeline succeeded in {format_duration(event.duration_s, 'seconds')}"
    elif isinstance(event, PipelineFailed):
        text = f"pipeline FAILED in {format_duration(event.duration_s, 'seconds')}: {event.error}"
    elif isinstance(event, BudgetWarning | ModelPriceUnknown):
        text = f"! warning: {event.message}"
    elif isinstance(event, BudgetExceeded):
        text = f"pipeline stopped by its budget after {format_duration(event.duration_s, 'seconds')}: {event.message}"
    return prefix + text if text is not None else None


class PlainProgress:
    """One plain line per interesting event, for logs and pipes (imports nothing heavy)."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream: IO[str] | None = stream
        self._lock = threading.Lock()

    def on_event(self, event: EngineEvent) -> None:
        line = describe(event)
        if line is not None:
            self.note(line)

    def note(self, line: str) -> None:
        """Write a line that is not an engine event (agent turns, workspace set-up)."""
        with self._lock:
            if self._stream is None:
                return
            try:
                self._stream.write(line + "\n")
                self._stream.flush()
            except (BrokenPipeError, ValueError):  # the reader went away (`| head`): stop writing
                self._stream = None


@define
class RunningStage:
    """A stage of the main line that has started and not ended, for the heartbeat."""

    node_id: str
    handler_type: str
    started_at: float  # time.monotonic()
    agent_turns: int = 0  # agent turns completed so far: the turn in progress has this number (0-based)


def heartbeat_line(running: Mapping[str, RunningStage], now: float) -> str | None:
    """The heartbeat shown under the progress lines while stages run (None when none does):
    `… implement running for 1m 05s, waiting for agent turn 2`; several stages (a fan-out and its parallel
    node) are joined with `; `."""
    parts = []
    for stage in running.values():
        part = f"{stage.node_id} running for {format_duration(max(now - stage.started_at, 0.0), 'readable')}"
        if stage.handler_type == "codergen" or stage.agent_turns:
            part += f", waiting for agent turn {stage.agent_turns}"
        parts.append(part)
    return "… " + "; ".join(parts) if parts else None


class _Heartbeat:
    """A rich renderable that reads the clock each time rich's live display refreshes it (once a second)."""

    def __init__(self, line: Callable[[], str | None]) -> None:
        self._line = line

    def __rich__(self) -> Any:
        from rich.text import Text

        return Text(self._line() or "", style="dim")


_STYLES = {
    "ok": "green", "x": "bold red", "!": "yellow", "~": "yellow", ">": "cyan", "||": "magenta", "?": "blue"
}


class RichProgress:
    """Coloured lines on a terminal; while branches run in parallel, a live table shows them side by side
    (one column per branch, its stages listed down the column). While a stage of the main line runs, a
    heartbeat line under the output (on a terminal only) shows how long it has been running and which agent
    turn it waits for, so a long model call never looks like a hang."""

    def __init__(self, console: Any, clock: Callable[[], float] = time.monotonic) -> None:
        self._console = console
        self._clock = clock
        self._lock = threading.Lock()
        self._live: Any = None
        self._columns: dict[str, list[str]] = {}
        self._running: dict[str, RunningStage] = {}
        self._running_lock = threading.Lock()  # the heartbeat's refresh thread reads _running without _lock
        self._heartbeat: Any = None
        self._asking = False
        self._exit_hook = False

    def on_event(self, event: EngineEvent) -> None:
        with self._lock:
            self._follow_stages(event)
            if event.branch and self._live is not None and self._track(event):
                self._live.update(self._table(), refresh=True)
                return
            ends_block = isinstance(event, ParallelCompleted) and event.branch is None
            if ends_block or isinstance(event, InterviewStarted):
                self._stop_live()
            if isinstance(event, InterviewStarted):
                self._asking = True
                self._stop_heartbeat()  # a question reads the terminal
            elif isinstance(event, ParallelStarted) and event.branch is None:
                self._stop_heartbeat()  # a fan-out gets its own live view
            elif isinstance(event, InterviewCompleted | InterviewTimeout):
                self._asking = False
            self._print(event)
            if isinstance(event, ParallelStarted) and event.branch is None and self._live is None:
                self._start_live(event)
            self._update_heartbeat()

    def agent_turn(self, node_id: str, turn_number: int, branch: str | None = None) -> None:
        """An agent turn of `node_id` completed: the heartbeat now waits for the next one."""
        if branch:
            return
        with self._running_lock:
            stage = self._running.get(node_id)
            if stage is not None:
                stage.agent_turns = max(stage.agent_turns, turn_number + 1)

    def heartbeat(self) -> str | None:
        """The heartbeat line as of now (None when no stage runs)."""
        with self._running_lock:
            return heartbeat_line(dict(self._running), self._clock())

    def close(self) -> None:
        """Stop the live views (the run ended)."""
        with self._lock:
            self._stop_heartbeat()
            self._stop_live()

    def _follow_stages(self, event: EngineEvent) -> None:
        if event.branch:
            return
        with self._running_lock:
            if isinstance(event, StageStarted):
                self._running[event.node_id] = RunningStage(event.node_id, event.handler_type, self._clock())
            elif isinstance(event, StageCompleted | StageFailed) and not (
                isinstance(event, StageFailed) and event.will_retry
            ):
                self._running.pop(event.node_id, None)
            elif isinstance(event, PipelineCompleted | PipelineFailed | BudgetExceeded):
                self._running.clear()

    def _update_heartbeat(self) -> None:
        """Show the heartbeat while a stage runs on a terminal, outside questions and the parallel view."""
        with self._running_lock:
            wanted = bool(self._running)
        if not wanted or self._asking or self._live is not None or not self._console.is_terminal:
            self._stop_heartbeat()
        elif self._heartbeat is None:
            from rich.live import Live

            self._heartbeat = Live(
                _Heartbeat(self.heartbeat), console=self._console, refresh_per_second=1, transient=True
            )
            if not self._exit_hook:  # an interrupted run must not leave the terminal's cursor hidden
                import atexit

                atexit.register(self._stop_heartbeat)
                self._exit_hook = True
            self._heartbeat.start(refresh=True)

    def _stop_heartbeat(self) -> None:
        heartbeat, self._heartbeat = self._heartbeat, None
        if heartbeat is not None:
            heartbeat.stop()

    def note(self, line: str) -> None:
        """Print a line that is not an engine event (agent turns, workspace set-up), dimmed; a warning in
        yellow, even while the parallel view is live (rich prints it above the view)."""
        with self._lock:
            if line.startswith("warning:"):
                self._console.print(line, style="yellow", highlight=False, markup=False)
            elif self._live is None:
                self._console.print(line, style="dim", highlight=False, markup=False)

    def _print(self, event: EngineEvent) -> None:
        line = describe(event)
        if line is None:
            return
        marker = line.split(" ", 1)[0] if not event.branch else ""
        style = _STYLES.get(marker, "bold" if line.startswith("pipeline") else "")
        self._console.print(line, style=style or None, highlight=False, markup=False)

    def _start_live(self, event: ParallelStarted) -> None:
        from rich.live import Live

        self._columns = {branch: [] for branch in event.branch_ids}
        self._live = Live(self._table(), console=self._console, auto_refresh=False, transient=False)
        self._live.start()

    def _stop_live(self) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None

    def _track(self, event: EngineEvent) -> bool:
        """Record a branch event in its column; False when it is not a branch stage event."""
        assert event.branch is not None
        column = event.branch.split("/", 1)[0].rsplit(":", 1)[-1]
        if column not in self._columns:
            return False
        if isinstance(event, StageStarted):
            self._columns[column].append(f"> {event.node_id}")
        elif isinstance(event, StageCompleted | StageFailed):
            mark = "ok" if isinstance(event, StageCompleted) else ("~" if event.will_retry else "x")
            entry = f"{mark} {event.node_id} {format_duration(event.duration_s, 'seconds')}"
            self._replace_last(column, event.node_id, entry)
        else:
            return False
        return True

    def _replace_last(self, column: str, node_id: str, entry: str) -> None:
        lines = self._columns[column]
        if lines and lines[-1] == f"> {node_id}":
            lines[-1] = entry
        else:
            lines.append(entry)

    def _table(self) -> Any:
        from rich.table import Table

        table = Table(show_edge=False, pad_edge=False, expand=False)
        for branch in self._columns:
            table.add_column(branch, no_wrap=True)
        if self._columns:
            table.add_row(*("\n".join(lines) or "…" for lines in self._columns.values()))
        return table
