"""Progress output for `orchestra run`: plain lines (no rich import) and the rich terminal view."""

from __future__ import annotations

import threading
from typing import IO, Any

from orchestra_core.model.events import (
    EngineEvent,
    InterviewCompleted,
    InterviewStarted,
    InterviewTimeout,
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
    elif isinstance(event, PipelineCompleted):
        text = f"pipeline succeeded in {format_duration(event.duration_s, 'seconds')}"
    elif isinstance(event, PipelineFailed):
        text = f"pipeline FAILED in {format_duration(event.duration_s, 'seconds')}: {event.error}"
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


_STYLES = {"ok": "green", "x": "bold red", "~": "yellow", ">": "cyan", "||": "magenta", "?": "blue"}


class RichProgress:
    """Coloured lines on a terminal; while branches run in parallel, a live table shows them side by side
    (one column per branch, its stages listed down the column)."""

    def __init__(self, console: Any) -> None:
        self._console = console
        self._lock = threading.Lock()
        self._live: Any = None
        self._columns: dict[str, list[str]] = {}

    def on_event(self, event: EngineEvent) -> None:
        with self._lock:
            if event.branch and self._live is not None and self._track(event):
                self._live.update(self._table(), refresh=True)
                return
            ends_block = isinstance(event, ParallelCompleted) and event.branch is None
            if ends_block or isinstance(event, InterviewStarted):
                self._stop_live()
            self._print(event)
            if isinstance(event, ParallelStarted) and event.branch is None and self._live is None:
                self._start_live(event)

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
