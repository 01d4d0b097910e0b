"""SessionRecorder: writes a run into the session store as it happens (seed 003, "Execution Trace as Turn DAG").

It is three things to the engine: an event observer (lifecycle, node, parallel and human turns), a
checkpoint sink (CheckpointRecord turns; a failure there stops the run, since a resume depends on them) and the
end of every codergen stage's `on_turn` chain (AgentTurn turns, after the workspace committed them). The
workspace's events land here too. Parallel branches and child runs get their own sessions, forked from
their parent line where they start, so the store shows them as forks.

One store write per node (issue 16): its turns with its checkpoint, in one `append_batch` (one transaction
in SQLite), before the engine moves on. Turns that wait for the checkpoint (node starts and ends, parallel
and human turns) are written with it; lifecycle, agent and workspace turns, retries and snapshots are
written at once, with whatever waits; a background flusher writes turns that have waited `flush_after_s`,
so a node that runs longer than that shows as running to a follower (and a resume after a kill records it
interrupted), while a fast node costs one write.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping

from orchestra_core.model import events as ev
from orchestra_core.model import records as r
from orchestra_core.model.checkpoint import Checkpoint
from orchestra_core.model.outcome import StageStatus
from orchestra_core.model.turn import AgentTurn, TokenUsage
from orchestra_core.model.workspace_events import (
    CommitModelFailedOver,
    WorkspaceEvent,
    WorkspaceSnapshotRecorded,
)
from orchestra_core.ports.session_store import SessionStore, StoredTurn, TurnAppend
from orchestra_core.session.api import fork_session
from orchestra_core.session.catalog import has_turn_type
from orchestra_core.session.checkpoints import FULL_EVERY, CheckpointDeltas, PipelineSource, RepoHead
from orchestra_core.session.codec import encode_record
from orchestra_core.session.interrupted import interruption_of, open_nodes
from orchestra_core.session.trace import BRANCH_TITLE_PREFIX, PARALLEL_SPAWN

RepoHeads = Callable[[], Mapping[str, RepoHead]]
# How often the flusher looks for turns that have waited for their checkpoint at least as long: a follower
# such as `attach` sees a slow node start within twice this (a fast node's start waits for its checkpoint).
FLUSH_AFTER_S = 0.05


class SessionRecorder:
    """Records one run (and its branches) into a session of the store."""

    def __init__(
        self,
        store: SessionStore,
        session_id: str,
        *,
        pipeline_name: str,
        source: PipelineSource | None = None,
        repo_heads: RepoHeads | None = None,
        full_every: int = FULL_EVERY,
        on_snapshot: Callable[[WorkspaceSnapshotRecorded], None] | None = None,
        flush_after_s: float = FLUSH_AFTER_S,
    ) -> None:
        self._store = store
        self._pipeline_name = pipeline_name
        self._source = source or PipelineSource()
        self._repo_heads = repo_heads
        self._lines: dict[str | None, str] = {None: session_id}
        self._fan_outs: dict[tuple[str | None, str], list[str]] = {}
        self._usage: dict[tuple[str | None, str], tuple[int, TokenUsage]] = {}
        self._deltas = CheckpointDeltas(full_every)
        self._on_snapshot = on_snapshot
        self._lost: Exception | None = None
        self._lock = threading.RLock()
        self._pending: list[TurnAppend] = []
        self._pending_since = 0.0
        self._flush_after_s = flush_after_s
        self._wake = threading.Condition(self._lock)
        self._flusher: threading.Thread | None = None
        self._closed = False
        self._start_recorded = False

    def __repr__(self) -> str:  # engine messages name a failing sink or observer by its repr
        return f"session {self.session_id} in {self._store.location}"

    @property
    def session_id(self) -> str:
        return self._lines[None]

    def branch_sessions(self) -> dict[str, str]:
        """Branch path -> the forked session that holds its turns."""
        with self._lock:
            return {branch: sid for branch, sid in self._lines.items() if branch is not None}

    # CheckpointRecord sink -------------------------------------------------------------------------------
    def save(self, checkpoint: Checkpoint) -> None:
        """Append the checkpoint (with every workspace repo's head) to the main line, as a delta when it can.

        Raises:
            StoreError: The store refused this checkpoint, or an event turn since the last one (a run must
                not go on while its record has a hole: the engine stops, and the session stays resumable).
        """
        with self._lock:  # the flusher thread may be setting it
            lost, self._lost = self._lost, None
        if lost is not None:
            raise lost
        heads = self._repo_heads() if self._repo_heads else None
        record = self._deltas.record(checkpoint, repos=heads, source=self._source)
        turn = self._append(None, record)
        if self._deltas.remember(checkpoint, record, turn.turn_id) and record.workspace_snapshot is not None:
            event = WorkspaceSnapshotRecorded(
                session_id=self.session_id, node_id=checkpoint.current_node or None,
                snapshot=record.workspace_snapshot, checkpoint_turn_id=turn.turn_id,
            )
            self._append(None, event)
            if self._on_snapshot is not None:
                self._on_snapshot(event)

    def flush(self) -> None:
        """Write the turns that wait for the next checkpoint (before recording a failure, and at the end).

        Raises:
            StoreError: The store refused them.
        """
        with self._lock:
            batch, self._pending = self._pending, []
            if batch:
                self._store.append_batch(batch)

    def close(self) -> None:
        """Flush, and stop the background flusher."""
        with self._lock:
            self._closed = True
            self._wake.notify_all()
        self.flush()

    def continue_from(self, heads: Mapping[str, RepoHead]) -> None:
        """A resume: the workspace was restored to these heads (the snapshot it resumes from), so the next
        snapshot is recorded (and reported) only when a head moves away from them."""
        self._deltas.continue_from(heads)

    # Lines run elsewhere ------------------------------------------------------------------------------
    def use_lines(self, lines: Mapping[str | None, str]) -> None:
        """Record these lines into these sessions instead of forking them (a worker running a branch its session's
        runner sent it records into the branch's own session: `{None: line, branch: line}`)."""
        with self._lock:
            self._lines.update(lines)

    def open_line(self, branch: str) -> str:
        """A fresh fork for the turns of `branch` (a main-line node run by a worker of another queue), from its
        parent line's head."""
        return self._open_line(branch)

    def rerun_line(self, branch: str, node_id: str, branch_id: str, claim: Callable[[str], bool]) -> str | None:
        """A branch runs again from its start (its runner was lost): a fresh fork for its turns, which takes the old
        one's place (in the fan-in's list too, and its parent line says the branch started again in it) once
        `claim(fork)` says the branch is now the fork's (the fleet's ledger, by compare-and-set). None when the
        claim failed: the old line stays the branch's, and the fork stays empty."""
        parent = branch.rsplit("/", 1)[0] if "/" in branch else None
        new = self._fork(parent, branch)
        if not claim(new):
            return None
        with self._lock:
            old = self._lines.get(branch)
            self._forget(branch)
            self._lines[branch] = new
            forks = self._fan_outs.get((parent, node_id))
            if forks is not None and old in forks:
                forks[forks.index(old)] = new
        started = r.ParallelExecution(
            node_id, r.ParallelEvent.BRANCH_STARTED, branch_id=branch_id, branch_session_id=new
        )
        self._append(parent, started)
        return new

    # Starting and resuming -----------------------------------------------------------------------------
    def record_start(self, record: r.PipelineLifecycle) -> None:
        """Record the run's start now, before the engine starts (the runner holds the session and has more to set
        up); the engine's own start event is then not recorded again."""
        with self._lock:
            self._start_recorded = True
        self._append(None, record)

    def record_interrupted_nodes(self) -> list[str]:
        """Before a resume runs: close every main-line node the stopped run left running (started after the
        latest checkpoint, never ended) with an `interrupted` NodeExecution; return those nodes.

        The resume then runs such a node once more from its start; nodes finished before the checkpoint are not
        run again.
        """
        found = open_nodes(self._store, self.session_id)
        for record in found:
            self._append(None, interruption_of(record))
        return [record.node_id for record in found]

    # Agent turns and workspace events -----------------------------------------------------------------
    def record_agent_turn(self, turn: AgentTurn, branch: str | None = None) -> StoredTurn:
        """Append an AgentTurn (v2, with its commits) to the line of the stage that made it."""
        with self._lock:
            key = (branch, turn.node_id)
            count, usage = self._usage.get(key, (0, TokenUsage()))
            self._usage[key] = (count + 1, usage + turn.token_usage)
        return self._append(branch, turn)

    def on_workspace_event(self, event: WorkspaceEvent) -> None:
        """Record a workspace event that has a turn type (branch, worktree, commit, merge) on the main line;
        the others (warnings, restores) are only reported."""
        if has_turn_type(event):  # rare, and about git state: written at once
            self._append(None, event)
        elif isinstance(event, CommitModelFailedOver):
            self._append(None, event.failover)

    def record_now(self, record: object) -> StoredTurn:
        """Append a turn record (a NotificationFailed, ...) to the main line now, after the turns that wait; also
        once the recorder is closed (what the end of a run still has to say).

        Raises:
            StoreError: The store refused it.
        """
        return self._append(None, record)

    # Engine events ------------------------------------------------------------------------------------
    def on_event(self, event: ev.EngineEvent) -> None:
        """Record an engine event; events without a turn type (edges, checkpoints) are skipped."""
        try:
            self._track_lines(event)
            record = self._record_for(event)
            if record is not None:
                branch_turn = isinstance(event, ev.ParallelBranchStarted | ev.ParallelBranchCompleted)
                line = self._branch_path(event) if branch_turn else event.branch  # type: ignore[arg-type]
                # a chat message is a resume point (and goes before the agent turns it causes): written at once
                if isinstance(record, r.PipelineLifecycle) or isinstance(event, ev.StageRetrying) or _interactive(event):
                    self._append(line, record)
                else:
                    self._defer(line, record)
        except Exception as error:
            # Observers are best effort for the engine, but a hole in the record is not: the next
            # checkpoint fails with this error, which stops the run.
            with self._lock:
                self._lost = self._lost or error
            raise

    def _record_for(self, event: ev.EngineEvent) -> object | None:
        handler = _EVENT_RECORDS.get(type(event))
        return handler(self, event) if handler is not None else None

    def _lifecycle(self, event: ev.EngineEvent) -> r.PipelineLifecycle | None:
        if event.branch is not None:
            return None  # a child run's own lifecycle is summed up by its branch's turns
        if isinstance(event, ev.PipelineStarted):
            if not event.resumed and self._start_recorded:  # recorded by `record_start` already
                self._start_recorded = False
                return None
            kind = r.LifecycleEvent.RESUMED if event.resumed else r.LifecycleEvent.STARTED
            return r.PipelineLifecycle(
                kind, self._pipeline_name, goal=event.goal, dot_path=self._source.path,
                dot_blob=self._source.blob, logs_root=event.logs_root,
            )
        if isinstance(event, ev.PipelineCompleted):
            return r.PipelineLifecycle(
                r.LifecycleEvent.COMPLETED, self._pipeline_name, status=StageStatus.SUCCESS,
                duration_s=event.duration_s,
            )
        if isinstance(event, ev.BudgetExceeded):
            return r.PipelineLifecycle(
                r.LifecycleEvent.BUDGET_EXCEEDED, self._pipeline_name, duration_s=event.duration_s, error=event.message
            )
        assert isinstance(event, ev.PipelineFailed)
        return r.PipelineLifecycle(
            r.LifecycleEvent.FAILED, self._pipeline_name, status=StageStatus.FAIL,
            duration_s=event.duration_s, error=event.error,
        )

    def _cost_notice(self, event: ev.EngineEvent) -> object:
        if isinstance(event, ev.BudgetWarning):
            return r.BudgetWarning(event.budget, event.spent, event.limit, event.message, event.node_id or "")
        assert isinstance(event, ev.ModelPriceUnknown)
        return r.ModelPriceUnknown(event.model, event.provider, event.node_id, event.message)

    def _node(self, event: ev.EngineEvent) -> r.NodeExecution:
        if isinstance(event, ev.StageStarted):
            with self._lock:
                self._usage.pop((event.branch, event.node_id), None)
            return r.NodeExecution(event.node_id, r.NodeEvent.STARTED, event.handler_type, attempt=event.attempt)
        if isinstance(event, ev.StageRetrying):
            return r.NodeExecution(event.node_id, r.NodeEvent.RETRYING, event.handler_type, attempt=event.attempt)
        assert isinstance(event, ev.StageCompleted | ev.StageFailed)
        kind = r.NodeEvent.COMPLETED if isinstance(event, ev.StageCompleted) else r.NodeEvent.FAILED
        with self._lock:
            turns, usage = self._usage.get((event.branch, event.node_id), (0, TokenUsage()))
        return r.NodeExecution(
            event.node_id, kind, event.handler_type, attempt=event.attempts, outcome=event.outcome,
            duration_s=event.duration_s, total_token_usage=usage if turns else None,
            agent_turn_count=turns or None,
        )

    def _parallel(self, event: ev.EngineEvent) -> r.ParallelExecution:
        if isinstance(event, ev.ParallelStarted):
            return r.ParallelExecution(
                event.node_id, r.ParallelEvent.FAN_OUT, branch_count=event.branch_count,
                join_policy=event.join_policy,
            )
        if isinstance(event, ev.ParallelBranchStarted | ev.ParallelBranchCompleted):
            completed = isinstance(event, ev.ParallelBranchCompleted)
            return r.ParallelExecution(
                event.node_id,
                r.ParallelEvent.BRANCH_COMPLETED if completed else r.ParallelEvent.BRANCH_STARTED,
                branch_id=event.branch_id,
                branch_session_id=self._lines.get(self._branch_path(event)),
                status=StageStatus(event.status) if completed else None,  # type: ignore[union-attr]
            )
        assert isinstance(event, ev.ParallelCompleted)
        with self._lock:
            forks = tuple(self._fan_outs.pop((event.branch, event.node_id), ()))
        return r.ParallelExecution(
            event.node_id, r.ParallelEvent.FAN_IN, success_count=event.success_count,
            failure_count=event.failure_count, branch_session_ids=forks,
        )

    def _interview(self, event: ev.EngineEvent) -> r.HumanInteraction:
        assert isinstance(event, ev.InterviewCompleted | ev.InterviewTimeout)
        question = event.question
        options = tuple(option.label for option in question.options)
        if isinstance(event, ev.InterviewTimeout):
            return r.HumanInteraction(question.stage, r.InteractionMode.GATE, question.text, options, answer="timeout")
        answer = event.answer
        selected = answer.selected_option.label if answer.selected_option else None
        mode = r.InteractionMode.INTERACTIVE if _interactive(event) else r.InteractionMode.GATE
        return r.HumanInteraction(
            question.stage, mode, question.text, options,
            answer=answer.text or answer.value, selected_option=selected,
        )

    # Lines (the main session and one forked session per branch) --------------------------------------
    def _branch_path(self, event: ev.ParallelBranchStarted | ev.ParallelBranchCompleted) -> str:
        prefix = f"{event.branch}/" if event.branch else ""
        return f"{prefix}{event.node_id}:{event.branch_id}"

    def _track_lines(self, event: ev.EngineEvent) -> None:
        """Every fan-out branch and child run starts a fresh fork, also when its node runs again."""
        if isinstance(event, ev.ParallelStarted):
            with self._lock:
                self._fan_outs[(event.branch, event.node_id)] = []
        elif isinstance(event, ev.ParallelBranchStarted):
            fork = self._open_line(self._branch_path(event))
            with self._lock:
                self._fan_outs.setdefault((event.branch, event.node_id), []).append(fork)
        elif isinstance(event, ev.PipelineStarted) and event.branch is not None:
            self._open_line(event.branch)

    def _open_line(self, branch: str) -> str:
        with self._lock:
            self._forget(branch)
            return self._line(branch)

    def _forget(self, branch: str) -> None:
        """Drop the lines of `branch` and of the branches nested in it (the next turn of each forks afresh)."""
        with self._lock:
            for path in [p for p in self._lines if p == branch or (p and p.startswith(f"{branch}/"))]:
                del self._lines[path]

    def _line(self, branch: str | None) -> str:
        with self._lock:
            known = self._lines.get(branch)
            if known is not None:
                return known
            assert branch is not None
            line = self._fork(branch.rsplit("/", 1)[0] if "/" in branch else None, branch)
            self._lines[branch] = line
            return line

    def _fork(self, parent_branch: str | None, branch: str) -> str:
        """A new session for the turns of `branch`, forked at the head of its parent's line (the parent's line
        itself while that is empty)."""
        with self._lock:
            parent = self._line(parent_branch)
            self.flush()  # the fork starts at the parent's head, so what waits belongs before it
            head = self._store.head(parent).turn_id
            if head is None:
                return parent
            title = f"{BRANCH_TITLE_PREFIX}{branch}"
            return fork_session(self._store, parent, head, spawn_reason=PARALLEL_SPAWN, title=title).session_id

    def _append(self, branch: str | None, record: object) -> StoredTurn:
        """Append a record to its line's session now, after the turns that wait (in one store write)."""
        turn = self._turn(branch, record)
        with self._lock:
            batch, self._pending = [*self._pending, turn], []
            return self._store.append_batch(batch)[-1]

    def _defer(self, branch: str | None, record: object) -> None:
        """Let a record wait for the next write (a checkpoint, a lifecycle or agent turn, or the flusher)."""
        turn = self._turn(branch, record)
        with self._lock:
            if not self._pending:
                self._pending_since = time.monotonic()
                if self._flusher is None:
                    self._start_flusher()
            self._pending.append(turn)

    def _turn(self, branch: str | None, record: object) -> TurnAppend:
        encoded = encode_record(record)
        return TurnAppend(self._line(branch), encoded.type_id, encoded.type_version, encoded.data)

    def _start_flusher(self) -> None:
        if not self._closed:
            self._flusher = threading.Thread(target=self._flush_late, name="session-flusher", daemon=True)
            self._flusher.start()

    def _flush_late(self) -> None:
        """The background flusher: every `flush_after_s`, writes the turns that have waited that long for their
        checkpoint. It polls rather than being woken, so a fast node costs it nothing."""
        with self._lock:
            while not self._closed:
                self._wake.wait(self._flush_after_s)
                if not self._pending or time.monotonic() - self._pending_since < self._flush_after_s:
                    continue
                try:
                    self.flush()
                except Exception as error:  # the next checkpoint reports it, which stops the run
                    self._lost = self._lost or error


_EVENT_RECORDS: dict[type, Callable[[SessionRecorder, ev.EngineEvent], object | None]] = {
    ev.PipelineStarted: SessionRecorder._lifecycle,
    ev.PipelineCompleted: SessionRecorder._lifecycle,
    ev.PipelineFailed: SessionRecorder._lifecycle,
    ev.BudgetExceeded: SessionRecorder._lifecycle,
    ev.BudgetWarning: SessionRecorder._cost_notice,
    ev.ModelPriceUnknown: SessionRecorder._cost_notice,
    ev.StageStarted: SessionRecorder._node,
    ev.StageRetrying: SessionRecorder._node,
    ev.StageCompleted: SessionRecorder._node,
    ev.StageFailed: SessionRecorder._node,
    ev.ParallelStarted: SessionRecorder._parallel,
    ev.ParallelBranchStarted: SessionRecorder._parallel,
    ev.ParallelBranchCompleted: SessionRecorder._parallel,
    ev.ParallelCompleted: SessionRecorder._parallel,
    ev.InterviewCompleted: SessionRecorder._interview,
    ev.InterviewTimeout: SessionRecorder._interview,
    ev.ModelFailedOver: lambda recorder, event: event.failover,  # type: ignore[attr-defined]
}


def _interactive(event: ev.EngineEvent) -> bool:
    """A message of an interactive node's conversation (handlers/interactive.py), not a gate's answer."""
    return isinstance(event, ev.InterviewCompleted) and event.question.metadata.get("mode") == "interactive"
