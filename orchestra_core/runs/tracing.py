"""A traced run: its events become spans (session, stages, parallel branches, turns, tool calls, commits), each
handed to the tracer as it ends. The engine knows nothing of it: the run subscribes it to its events.

The tree: the run's root span; a stage span per attempt of each node; inside a parallel node's stage, a span per
branch, holding the branch's stages; inside a stage, its turns (see `turn_spans`). A resumed run's root is a
child of the session's first root (same trace); a replay starts the trace of its new session, linked to the root
of the session it forks.
"""

from __future__ import annotations

import logging
import secrets
import threading
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from attrs import define, field, frozen

from orchestra_core.model import events as e
from orchestra_core.model.spans import (
    AttributeValue,
    Span,
    SpanContext,
    SpanEvent,
    SpanLink,
    SpanStatus,
    session_trace,
)
from orchestra_core.model.workspace_events import AgentCommitCreated, UntrackedWritesCommitted
from orchestra_core.ports.clock import Clock
from orchestra_core.ports.session_store import SessionStore
from orchestra_core.ports.tracer import Tracer
from orchestra_core.runs.events import RunEvent
from orchestra_core.runs.start import REPLAY, RESUME, SessionStart
from orchestra_core.runs.turn_spans import CommitSeen, TurnPlace, turn_spans

_SUCCESS = "success"
log = logging.getLogger("orchestra.runs")


def random_span_id() -> int:
    """A new span id (64 random bits, never 0)."""
    return secrets.randbits(64) or 1


@frozen(kw_only=True)
class TraceStart:
    """Which run is traced and where its trace is.

    Attributes:
        session_id: The run's session.
        pipeline: The pipeline's name.
        kind: `new`, `resume` or `replay`.
        session: The session's trace and its first run's root span (`session_trace`).
        continues: Whether the session ran before (a resume): the root is then a child of the first run's root.
        origin: For a replay, the forked session's trace (its root is linked).
        origin_session_id: For a replay, the forked session.
    """

    session_id: str
    pipeline: str
    kind: str
    session: SpanContext
    continues: bool = False
    origin: SpanContext | None = None
    origin_session_id: str = ""


def trace_start(start: SessionStart, store: SessionStore | None, pipeline: str, *, created: bool) -> TraceStart:
    """Where a run's trace is: its session's, derived from the session's id and creation time in the store.

    Args:
        start: The run's start, its session begun.
        store: The session store (None: the session id alone names the trace).
        pipeline: The pipeline's name.
        created: Whether this run created its session (a new run, a replay's fork): otherwise the session ran
            before, and this run's root continues its trace under the first run's root.
    """
    session = session_trace(start.session_id, _created_at(store, start.session_id))
    origin, origin_id = None, ""
    if start.kind == REPLAY and start.origin is not None:
        origin_id = start.origin[0]
        origin = session_trace(origin_id, _created_at(store, origin_id))
    return TraceStart(
        session_id=start.session_id, pipeline=pipeline, kind=start.kind, session=session,
        continues=start.kind == RESUME and not created, origin=origin, origin_session_id=origin_id,
    )  # fmt: skip


def _created_at(store: SessionStore | None, session_id: str) -> datetime | None:
    if store is None:
        return None
    try:
        return store.get_session(session_id).created_at
    except Exception:  # the trace still gets an id; only a resume elsewhere would not find it again
        return None


@define
class _Open:
    """A span still running."""

    name: str
    context: SpanContext
    parent: SpanContext | None
    start: datetime
    attributes: dict[str, AttributeValue] = field(factory=dict)
    events: list[SpanEvent] = field(factory=list)
    links: tuple[SpanLink, ...] = ()

    def finished(self, end: datetime, status: SpanStatus = SpanStatus.UNSET, message: str = "") -> Span:
        return Span(
            name=self.name, context=self.context, parent=self.parent, start=self.start, end=max(end, self.start),
            attributes=self.attributes, status=status, status_message=message, events=tuple(self.events),
            links=self.links,
        )  # fmt: skip


class RunTracing:
    """Turns one run's events into spans and hands each to the tracer when it ends; `end` closes the root.

    Events arrive one at a time (the run's EventFanout); a tracer failure never reaches the run.
    """

    def __init__(
        self, tracer: Tracer, start: TraceStart, clock: Clock, new_id: Callable[[], int] = random_span_id
    ) -> None:
        self._tracer = tracer
        self._start = start
        self._clock = clock
        self._new_id = new_id
        self._lock = threading.Lock()
        self._ended = False
        self._stages: dict[tuple[str | None, str], _Open] = {}
        self._branches: dict[str, _Open] = {}
        self._commits: dict[str, CommitSeen] = {}
        self._root = self._open_root()
        self._handlers: dict[type, Callable[[Any], None]] = {
            e.StageStarted: self._stage_started,
            e.StageCompleted: self._stage_completed,
            e.StageFailed: self._stage_failed,
            e.StageRetrying: self._stage_retrying,
            e.StageWarning: self._stage_warning,
            e.ParallelStarted: self._parallel_started,
            e.ParallelBranchStarted: self._branch_started,
            e.ParallelBranchCompleted: self._branch_completed,
            e.ParallelCompleted: self._parallel_completed,
            e.AgentTurnCompleted: self._turn_completed,
            e.PipelineRestarted: self._restarted,
            e.GoalGateUnsatisfied: self._goal_gate,
            AgentCommitCreated: self._commit_created,
            UntrackedWritesCommitted: self._commit_created,
        }

    @property
    def trace_id(self) -> int:
        return self._root.context.trace_id

    @property
    def root(self) -> SpanContext:
        """The run's root span."""
        return self._root.context

    def on_event(self, event: RunEvent) -> None:
        """Take one event of the run (engine or workspace); other kinds are ignored."""
        handler = self._handlers.get(type(event))
        if handler is None:
            return
        with self._lock:
            if not self._ended:
                handler(event)

    def close(self, flush_timeout_s: float) -> None:
        """The run is over: its trace ends (as interrupted, when nothing ended it) and what the tracer holds is
        sent, waiting at most `flush_timeout_s`. Never raises."""
        self.end("interrupted", "the run stopped before it ended")
        try:
            self._tracer.flush(flush_timeout_s)
        except Exception as error:
            log.debug("tracer flush failed: %s", error)

    def end(self, status: str, reason: str = "") -> None:
        """The run ended with `status` (`success`, `fail`, `interrupted`, ...): every span still open ends now,
        then the root. Only the first call counts."""
        with self._lock:
            if self._ended:
                return
            self._ended = True
            now = self._clock.now()
            failed = status != _SUCCESS
            leftover = f"the run ended ({status}) before it did" if failed else ""
            for open_span in [*reversed(self._branches.values()), *reversed(self._stages.values())]:
                self._export(open_span.finished(now, SpanStatus.ERROR if failed else SpanStatus.UNSET, leftover))
            self._branches.clear()
            self._stages.clear()
            self._commits.clear()
            self._root.attributes["orchestra.session.status"] = status
            if reason:
                self._root.attributes["orchestra.failure_reason"] = reason
            outcome = (SpanStatus.ERROR, reason or status) if failed else (SpanStatus.OK, "")
            self._export(self._root.finished(now, *outcome))

    # The root -------------------------------------------------------------------------------------------
    def _open_root(self) -> _Open:
        start = self._start
        if start.continues:
            context, parent = SpanContext(start.session.trace_id, self._new_id()), start.session
        else:
            context, parent = start.session, None
        verb = {"new": "run"}.get(start.kind, start.kind)
        attributes: dict[str, AttributeValue] = {
            "orchestra.session_id": start.session_id,
            "orchestra.pipeline": start.pipeline,
            "orchestra.run.kind": start.kind,
        }
        links: tuple[SpanLink, ...] = ()
        if start.origin is not None:
            attributes["orchestra.replay.of_session"] = start.origin_session_id
            links = (SpanLink(start.origin, {"orchestra.link": "replay_of"}),)
        return _Open(f"{verb} {start.pipeline}", context, parent, self._clock.now(), attributes, links=links)

    def _restarted(self, event: e.PipelineRestarted) -> None:
        attributes = {"orchestra.node_id": event.node_id, "orchestra.restart_count": event.restart_count}
        self._root.events.append(SpanEvent("loop_restart", event.timestamp, attributes))

    def _goal_gate(self, event: e.GoalGateUnsatisfied) -> None:
        attributes = {"orchestra.node_id": event.node_id, "orchestra.retry_target": event.retry_target or ""}
        self._root.events.append(SpanEvent("goal_gate_unsatisfied", event.timestamp, attributes))

    # Stages ---------------------------------------------------------------------------------------------
    def _stage_started(self, event: e.StageStarted) -> None:
        self._open_stage(event.branch, event.node_id, event.handler_type, event.index, event.attempt, event.timestamp)

    def _open_stage(
        self, branch: str | None, node_id: str, handler: str, index: int, attempt: int, at: datetime
    ) -> None:
        parent = self._parent_of_stage(branch)
        attributes: dict[str, AttributeValue] = {
            "orchestra.session_id": self._start.session_id,
            "orchestra.node_id": node_id,
            "orchestra.handler": handler,
            "orchestra.stage.index": index,
            "orchestra.stage.attempt": attempt,
        }
        if branch:
            attributes["orchestra.branch"] = branch
        context = SpanContext(self.trace_id, self._new_id())
        self._stages[(branch, node_id)] = _Open(f"stage {node_id}", context, parent, at, attributes)

    def _parent_of_stage(self, branch: str | None) -> SpanContext:
        """A parallel branch's span; else (a supervised child run) the stage running in the enclosing branch."""
        if branch is None:
            return self._root.context
        if branch in self._branches:
            return self._branches[branch].context
        enclosing = branch.rpartition("/")[0] or None
        for (stage_branch, _node), open_span in reversed(self._stages.items()):
            if stage_branch == enclosing:
                return open_span.context
        return self._parent_of_stage(enclosing)

    def _close_stage(self, event: e.StageCompleted | e.StageFailed, status: SpanStatus, message: str) -> None:
        open_span = self._stages.pop((event.branch, event.node_id), None)
        if open_span is None:
            return
        open_span.attributes["orchestra.stage.status"] = event.outcome.status.value
        if message:
            open_span.attributes["orchestra.failure_reason"] = message
        self._export(open_span.finished(event.timestamp, status, message))

    def _stage_completed(self, event: e.StageCompleted) -> None:
        self._close_stage(event, SpanStatus.OK, "")

    def _stage_failed(self, event: e.StageFailed) -> None:
        self._close_stage(event, SpanStatus.ERROR, event.outcome.failure_reason or event.outcome.status.value)

    def _stage_retrying(self, event: e.StageRetrying) -> None:
        """The next attempt's span starts once the backoff delay has passed."""
        begins = event.timestamp + timedelta(seconds=max(event.delay_s, 0.0))
        self._open_stage(event.branch, event.node_id, event.handler_type, event.index, event.attempt, begins)

    def _stage_warning(self, event: e.StageWarning) -> None:
        open_span = self._stages.get((event.branch, event.node_id))
        if open_span is not None:
            open_span.events.append(SpanEvent("warning", event.timestamp, {"message": event.message}))

    # Parallel branches ----------------------------------------------------------------------------------
    def _parallel_started(self, event: e.ParallelStarted) -> None:
        open_span = self._stages.get((event.branch, event.node_id))
        if open_span is not None:
            open_span.attributes["orchestra.parallel.branch_count"] = event.branch_count
            open_span.attributes["orchestra.parallel.join_policy"] = event.join_policy

    def _parallel_completed(self, event: e.ParallelCompleted) -> None:
        open_span = self._stages.get((event.branch, event.node_id))
        if open_span is not None:
            open_span.attributes["orchestra.parallel.success_count"] = event.success_count
            open_span.attributes["orchestra.parallel.failure_count"] = event.failure_count

    def _branch_started(self, event: e.ParallelBranchStarted) -> None:
        path = _branch_path(event.branch, event.node_id, event.branch_id)
        stage = self._stages.get((event.branch, event.node_id))
        parent = stage.context if stage is not None else self._parent_of_stage(event.branch)
        attributes: dict[str, AttributeValue] = {
            "orchestra.session_id": self._start.session_id,
            "orchestra.node_id": event.node_id,
            "orchestra.branch": path,
            "orchestra.branch.index": event.index,
        }
        context = SpanContext(self.trace_id, self._new_id())
        self._branches[path] = _Open(f"branch {path}", context, parent, event.timestamp, attributes)

    def _branch_completed(self, event: e.ParallelBranchCompleted) -> None:
        open_span = self._branches.pop(_branch_path(event.branch, event.node_id, event.branch_id), None)
        if open_span is None:
            return
        open_span.attributes["orchestra.branch.status"] = event.status
        status = SpanStatus.OK if event.success else SpanStatus.ERROR
        self._export(open_span.finished(event.timestamp, status, "" if event.success else event.status))

    # Turns and commits ----------------------------------------------------------------------------------
    def _commit_created(self, event: AgentCommitCreated | UntrackedWritesCommitted) -> None:
        """Commits are announced before their turn is recorded: kept until the turn's spans are made."""
        if not event.sha:
            return
        if isinstance(event, AgentCommitCreated):
            self._commits[event.sha] = CommitSeen(self._clock.now(), event.files, event.message_source)
        else:
            self._commits[event.sha] = CommitSeen(self._clock.now(), event.paths, "fixed", untracked=True)

    def _turn_completed(self, event: e.AgentTurnCompleted) -> None:
        stage = self._stages.get((event.branch, event.node_id))
        parent = stage.context if stage is not None else self._parent_of_stage(event.branch)
        place = TurnPlace(parent, self._start.session_id, event.branch, event.timestamp)
        for span in turn_spans(event.turn, place, self._commits, self._new_id):
            self._export(span)
        for commit in event.turn.commits:
            self._commits.pop(commit.sha, None)

    def _export(self, span: Span) -> None:
        try:
            self._tracer.export(span)
        except Exception as error:  # a tracer never fails the run
            log.debug("tracer export failed: %s", error)


def _branch_path(enclosing: str | None, node_id: str, branch_id: str) -> str:
    """A parallel branch's path as its stages' events name it (`fan:left`, `fan:a/inner:x`)."""
    return f"{enclosing}/{node_id}:{branch_id}" if enclosing else f"{node_id}:{branch_id}"
