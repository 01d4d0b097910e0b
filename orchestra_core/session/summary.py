"""What `orchestra status SESSION` shows: a session's node timeline, its turns, repos, checkpoints and ending."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from attrs import evolve, field, frozen

from orchestra_core.model import records as r
from orchestra_core.model import workspace_events as w
from orchestra_core.model.money import CostTally
from orchestra_core.model.turn import AgentTurn, TokenUsage
from orchestra_core.ports.session_locks import SessionLocks
from orchestra_core.ports.session_store import Id, SessionInfo, SessionStatus, SessionStore
from orchestra_core.session.catalog import AGENT_TURN, CHECKPOINT
from orchestra_core.session.liveness import live_info
from orchestra_core.session.restart import resume_advice
from orchestra_core.session.timeline import NodeRun, Timeline
from orchestra_core.session.trace import SessionTrace
from orchestra_core.session.turn_view import TurnView, tokens_json, turn_cost

FINISHED = (SessionStatus.SUCCESS, SessionStatus.FAIL, SessionStatus.INTERRUPTED, SessionStatus.BUDGET_EXCEEDED)


@frozen
class RepoState:
    """A workspace repo of the session: its session branch, where it started, its latest commit, and the
    commit its remote's session branch got last (`pushed_sha`, None: never pushed)."""

    name: str
    branch: str
    base_sha: str | None
    head_sha: str
    pushed_sha: str | None = None


@frozen
class BranchSession:
    """A session a parallel branch (or a child run) recorded into."""

    session_id: str
    branch: str
    parent_session_id: str | None


@frozen
class Ending:
    """The main line's latest lifecycle turn: how the run ended (or that it is running again)."""

    event: str
    error: str | None
    duration_s: float | None
    at: datetime | None


@frozen
class SnapshotRow:
    """A workspace snapshot: every repo's head as the checkpoint in `checkpoint_turn_id` recorded it."""

    checkpoint_turn_id: str
    node_id: str | None
    created_at: datetime | None
    heads: dict[str, str]

    def to_json(self) -> dict[str, Any]:
        return {
            "checkpoint_turn_id": self.checkpoint_turn_id,
            "node_id": self.node_id,
            "created_at": _iso(self.created_at),
            "repos": dict(self.heads),
        }


@frozen
class SummaryCounts:
    """Counts of a whole session (branch sessions included): what the header and the "last N of M" lines say."""

    node_runs: int
    agent_turns: int
    tokens: TokenUsage
    checkpoints: int
    cost: CostTally = field(factory=CostTally)


@frozen
class SessionSummary:
    """A session with the turns of its branch sessions, summarized.

    Attributes:
        info: The session as listed.
        nodes: Every node execution, main line and branches, in start order.
        turns: Every turn of the session's history and of its branch sessions' own histories, in append
            order (bulky fields left out).
        branches: The branch sessions found.
        repos: Each workspace repo's branch, base and latest head.
        fork_turn_id: For a forked session (a replay), the turn of its origin it was forked at.
        ending: The latest lifecycle turn of the main line, None before the run started.
        counts: The whole session's counts when `nodes` and `turns` hold only its recent end
            (`orchestra_core.session.recent`); None when they hold all of it.
        resume: For an interrupted session, what `orchestra resume` does with it (`session.restart`), as every
            command says it; None otherwise.
    """

    info: SessionInfo
    nodes: tuple[NodeRun, ...]
    turns: tuple[TurnView, ...]
    branches: tuple[BranchSession, ...] = ()
    repos: tuple[RepoState, ...] = ()
    fork_turn_id: str | None = None
    ending: Ending | None = None
    counts: SummaryCounts | None = None
    resume: str | None = None

    @property
    def totals(self) -> SummaryCounts:
        """The whole session's counts: `counts` when the summary holds only its recent end, else counted."""
        if self.counts is not None:
            return self.counts
        return SummaryCounts(len(self.nodes), len(self.agent_turns), self.tokens, len(self.checkpoints), self.cost)

    @property
    def agent_turns(self) -> tuple[TurnView, ...]:
        return tuple(turn for turn in self.turns if turn.type_id == AGENT_TURN.type_id)

    @property
    def checkpoints(self) -> tuple[TurnView, ...]:
        """The main line's Checkpoint turns (each one a place to `replay --checkpoint` from)."""
        return tuple(t for t in self.turns if t.type_id == CHECKPOINT.type_id and t.branch is None)

    @property
    def snapshots(self) -> tuple[SnapshotRow, ...]:
        """The main line's workspace snapshots, each where the heads differ from the one before (a full
        checkpoint restating the same heads, or an older session's snapshot on every checkpoint, is left out)."""
        rows: list[SnapshotRow] = []
        for turn in self.checkpoints:
            record = turn.record
            if not isinstance(record, r.CheckpointRecord) or record.workspace_snapshot is None:
                continue
            heads = record.workspace_snapshot.sha_by_repo()
            if not rows or rows[-1].heads != heads:
                rows.append(SnapshotRow(turn.turn_id, turn.node_id, turn.created_at, heads))
        return tuple(rows)

    @property
    def tokens(self) -> TokenUsage:
        """Tokens of every agent turn, branches included."""
        total = TokenUsage()
        for turn in self.agent_turns:
            assert isinstance(turn.record, AgentTurn)
            total = total + turn.record.token_usage
        return total

    @property
    def cost(self) -> CostTally:
        """What every agent turn cost, branches included (the turns of unknown cost counted apart)."""
        total = CostTally()
        for turn in self.agent_turns:
            assert isinstance(turn.record, AgentTurn)
            total = total.add(turn_cost(turn.record))
        return total

    @property
    def runner_gone(self) -> bool:
        """Interrupted without an ending recorded: the runner died (its lock was found free)."""
        ending = self.ending
        return self.info.status is SessionStatus.INTERRUPTED and (
            ending is None or ending.event in (r.LifecycleEvent.STARTED.value, r.LifecycleEvent.RESUMED.value)
        )

    @property
    def error(self) -> str | None:
        """Why the run failed or stopped: its lifecycle error, else the last failed node's reason."""
        if self.info.status not in (SessionStatus.FAIL, SessionStatus.INTERRUPTED, SessionStatus.BUDGET_EXCEEDED):
            return None
        advice = f"; {self.resume}" if self.resume else ""
        if self.ending is not None and self.ending.error:
            return self.ending.error + (advice if self.info.status is SessionStatus.INTERRUPTED else "")
        if self.runner_gone:
            return f"its runner is gone (killed, or its machine stopped) without recording an end{advice}"
        failed = [run.failure_reason for run in self.nodes if run.failure_reason]
        return failed[-1] if failed else None

    def to_json(self) -> dict[str, Any]:
        """The `orchestra status SESSION --json` document (DESIGN.md's keys first, then the rest)."""
        metadata = self.info.metadata
        totals = self.totals
        return {
            **session_row(self.info),
            "cost_usd": totals.cost.json_value(counted=totals.agent_turns),
            "cost_complete": totals.cost.complete,
            "nodes": [run.to_json() for run in self.nodes],
            "turns": [turn.to_json() for turn in self.turns],
            "title": metadata.title,
            "parent_session_id": metadata.parent_session_id,
            "spawn_reason": metadata.spawn_reason or None,
            "forked_at_turn": self.fork_turn_id,
            "duration_s": self.ending.duration_s if self.ending else None,
            "error": self.error,
            "tokens": tokens_json(totals.tokens),
            "branches": [
                {"session_id": b.session_id, "branch": b.branch, "parent_session_id": b.parent_session_id}
                for b in self.branches
            ],
            "repos": {
                repo.name: {
                    "branch": repo.branch, "base_sha": repo.base_sha, "head_sha": repo.head_sha,
                    "pushed_sha": repo.pushed_sha,
                }
                for repo in self.repos
            },
            "checkpoints": [
                {"turn_id": t.turn_id, "node_id": t.node_id, "created_at": _iso(t.created_at)}
                for t in self.checkpoints
            ],
            "snapshots": [row.to_json() for row in self.snapshots],
        }


def session_row(info: SessionInfo) -> dict[str, Any]:
    """One entry of `orchestra status --json`: id, pipeline, status, started_at, ended_at (ISO 8601, UTC)."""
    ended = info.updated_at if info.status in FINISHED else None
    return {
        "session_id": info.session_id,
        "pipeline": info.metadata.pipeline,
        "status": info.status.value,
        "started_at": _iso(info.created_at),
        "ended_at": _iso(ended),
    }


def session_summary(
    store: SessionStore, session_id: Id, locks: SessionLocks | None = None, *, full_agent_turns: int | None = None
) -> SessionSummary:
    """Read a session (and its branch sessions) and summarize it.

    Reads the history page by page and decodes each turn without its transcript or context snapshot. With
    the runners' `locks`, a session recorded as running whose runner is gone is summarized as interrupted
    (see `liveness`). With `full_agent_turns`, only the last that many AgentTurns keep their tool calls,
    files and commits (read again one by one), for a view that shows no others.

    Raises:
        SessionNotFoundError: No such session.
        TurnDataError: A dev.orchestra turn cannot be decoded.
    """
    trace = SessionTrace(store, str(session_id), brief=full_agent_turns is not None)
    turns = tuple(trace.read())
    if full_agent_turns is not None:
        turns = last_agent_turns_in_full(store, turns, full_agent_turns)
    info = live_info(store, trace.info, locks)
    timeline = Timeline()
    timeline.add(turns)
    if info.status in FINISHED:
        timeline.close()
    main = trace.info.session_id
    main_turns = [turn for turn in turns if turn.session_id == main]
    return SessionSummary(
        info=info,
        nodes=timeline.runs(),
        turns=turns,
        branches=tuple(
            BranchSession(line.session_id, line.branch, line.info.metadata.parent_session_id)
            for line in trace.lines
            if line.branch is not None
        ),
        repos=repo_states(main_turns),
        fork_turn_id=trace.fork_turn_id,
        ending=_ending(main_turns),
        resume=resume_advice(store, main) if info.status is SessionStatus.INTERRUPTED else None,
    )


def last_agent_turns_in_full(store: SessionStore, turns: tuple[TurnView, ...], count: int) -> tuple[TurnView, ...]:
    """The turns with the last `count` AgentTurns read again and decoded with all a listing shows."""
    listed = list(turns)
    agent_turns = [index for index, turn in enumerate(listed) if turn.type_id == AGENT_TURN.type_id]
    for index in agent_turns[len(agent_turns) - count :] if count > 0 else ():
        turn = listed[index]
        listed[index] = TurnView.of(store.get_turn(turn.session_id, turn.turn_id), turn.session_id, turn.branch)
    return tuple(listed)


def repo_states(turns: list[TurnView]) -> tuple[RepoState, ...]:
    """Each repo's branch, base and latest head from the main line's workspace and checkpoint turns (the whole
    history, or the recent end of it from a checkpoint holding a workspace snapshot on: a push older than that
    snapshot is kept through it)."""
    repos: dict[str, RepoState] = {}
    for turn in turns:
        record = turn.record
        if isinstance(record, w.SessionBranchCreated):
            repos[record.repo] = RepoState(record.repo, record.branch, record.base_sha, record.base_sha)
        elif isinstance(record, w.AgentCommitCreated):
            known = repos.get(record.repo)
            repos[record.repo] = (
                evolve(known, head_sha=record.sha)
                if known
                else RepoState(record.repo, record.branch, None, record.sha)
            )
        elif isinstance(record, r.CheckpointRecord) and record.workspace_snapshot is not None:
            for snapshot in record.workspace_snapshot.repo_snapshots:
                known = repos.get(snapshot.repo_name)
                repos[snapshot.repo_name] = RepoState(
                    snapshot.repo_name,
                    snapshot.branch or (known.branch if known else ""),
                    snapshot.base_sha or (known.base_sha if known else None),
                    snapshot.git_sha,
                    known.pushed_sha if known else None,
                )
        elif isinstance(record, w.RemotePushed):
            known = repos.get(record.repo)
            repos[record.repo] = (
                evolve(known, pushed_sha=record.sha)
                if known
                else RepoState(record.repo, record.branch, None, record.sha, record.sha)
            )
    return tuple(repos.values())


def _ending(turns: list[TurnView]) -> Ending | None:
    lifecycle = [turn for turn in turns if isinstance(turn.record, r.PipelineLifecycle)]
    if not lifecycle:
        return None
    last = lifecycle[-1]
    record = last.record
    assert isinstance(record, r.PipelineLifecycle)
    return Ending(record.event.value, record.error, record.duration_s, last.created_at)


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment else None
