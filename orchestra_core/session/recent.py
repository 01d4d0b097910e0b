"""A session's recent summary: what `orchestra status SESSION` shows, read from the head back only as far as needed.

A store that keeps running totals per turn (`SessionTotalsReader`) gives the counts of the whole session
(agent turns, tokens, node runs, checkpoints, ...) at its head. The rest of the view is its recent end: the
last node runs, agent turns and checkpoints, and what the repos table needs (each repo's branch, base and
head as of the checkpoint before that window, then every turn in it; its latest push). So a session of
100,000 turns is summarized from a few hundred. Stores without totals get the whole summary.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from attrs import define, evolve, field, frozen

from orchestra_core.model import records as r
from orchestra_core.model import workspace_events as w
from orchestra_core.model.turn import AgentTurn, TokenUsage
from orchestra_core.ports.session_locks import SessionLocks
from orchestra_core.ports.session_store import (
    Id,
    SessionInfo,
    SessionStatus,
    SessionStore,
    SessionTotals,
    SessionTotalsReader,
    StoredTurn,
)
from orchestra_core.session.api import history
from orchestra_core.session.liveness import live_info
from orchestra_core.session.restart import resume_advice
from orchestra_core.session.spending import session_spending
from orchestra_core.session.summary import (
    FINISHED,
    BranchSession,
    Ending,
    SessionSummary,
    SummaryCounts,
    last_agent_turns_in_full,
    repo_states,
    session_summary,
)
from orchestra_core.session.timeline import Timeline
from orchestra_core.session.trace import PARALLEL_SPAWN, branch_label
from orchestra_core.session.turn_view import TurnView

_PAGE = 128


@frozen
class RecentLimits:
    """How much of a session's end a recent summary holds."""

    node_runs: int = 50
    agent_turns: int = 50
    checkpoints: int = 10


def recent_session_summary(
    store: SessionStore, session_id: Id, locks: SessionLocks | None = None, *, limits: RecentLimits | None = None
) -> SessionSummary:
    """A session's summary holding its recent end (`limits`) and the counts of all of it (`counts`).

    The node runs, agent turns (the last `limits.agent_turns` read in full), checkpoints and turns are those of
    the window read back from the head; `counts` and `repos` are the whole session's. A store without running
    totals gets `session_summary` of the whole session.

    Raises:
        SessionNotFoundError: No such session.
        TurnDataError: A dev.orchestra turn cannot be decoded.
    """
    limits = limits or RecentLimits()
    if not isinstance(store, SessionTotalsReader):
        full = session_summary(store, session_id, locks, full_agent_turns=limits.agent_turns)
        return evolve(full, nodes=full.nodes[-limits.node_runs :] if limits.node_runs > 0 else (), counts=full.totals)
    info = store.get_session(session_id)
    main = info.session_id
    totals = store.session_totals(main)
    window = _Window(limits, totals)
    views = window.read(store, main)
    branches = branch_lines(store, main) if totals.parallel else []
    start = views[0].created_at if views else None
    for branch_info, label in branches:
        if start is None or branch_info.updated_at is None or branch_info.updated_at >= start:
            own = _own(store, branch_info)
            views.extend(TurnView.of(turn, branch_info.session_id, label, brief=True) for turn in own)
    views.sort(key=lambda view: int(view.turn_id))
    views = list(last_agent_turns_in_full(store, tuple(views), limits.agent_turns))
    live = live_info(store, info, locks)
    timeline = Timeline()
    timeline.add(views)
    if live.status in FINISHED:
        timeline.close()
    main_views = [view for view in views if view.session_id == main]
    return SessionSummary(
        info=live,
        nodes=timeline.runs()[-limits.node_runs :] if limits.node_runs > 0 else (),
        turns=tuple(views),
        branches=tuple(BranchSession(i.session_id, label, i.metadata.parent_session_id) for i, label in branches),
        repos=repo_states(main_views),
        fork_turn_id=store.fork_point(main),
        ending=_ending(store, main, totals),
        counts=_counts(store, totals, branches, main),
        resume=resume_advice(store, main) if live.status is SessionStatus.INTERRUPTED else None,
    )


@define
class _Window:
    """Reads a line back from its head until the recent end the limits ask for (and the repos need) is in.

    The repos table needs each repo's branch, base and head as of the window's start: a checkpoint holding a
    workspace snapshot (every repo's state) in the window, or every SessionBranchCreated; and each repo's
    latest push: every RemotePushed, or one for each repo. Rollbacks and cleanups are listed, so all of them.
    """

    limits: RecentLimits
    totals: SessionTotals
    node_runs: int = 0
    agent_turns: int = 0
    checkpoints: int = 0
    pushes: int = 0
    rollbacks: int = 0
    cleanups: int = 0
    session_branches: int = 0
    snapshot_seen: bool = False
    pushed_repos: set[str] = field(factory=set)
    known_repos: set[str] = field(factory=set)

    def read(self, store: SessionStore, session_id: str) -> list[TurnView]:
        """The window's turns, oldest first."""
        views: list[TurnView] = []
        for turn in history(store, session_id, page_size=_PAGE):
            view = TurnView.of(turn, session_id, brief=True)
            views.append(view)
            self._count(view)
            if self._enough():
                break
        views.reverse()
        return views

    def _count(self, view: TurnView) -> None:
        record = view.record
        if isinstance(record, r.NodeExecution) and record.event is r.NodeEvent.STARTED:
            self.node_runs += 1
        elif isinstance(record, AgentTurn):
            self.agent_turns += 1
        elif isinstance(record, r.CheckpointRecord):
            self.checkpoints += 1
            if record.workspace_snapshot is not None:
                self.snapshot_seen = True
                self.known_repos.update(s.repo_name for s in record.workspace_snapshot.repo_snapshots)
        elif isinstance(record, w.RemotePushed):
            self.pushes += 1
            self.pushed_repos.add(record.repo)
        elif isinstance(record, w.SessionRolledBack):
            self.rollbacks += 1
        elif isinstance(record, w.SessionCleanedUp):
            self.cleanups += 1
        elif isinstance(record, w.SessionBranchCreated):
            self.session_branches += 1
            self.known_repos.add(record.repo)
        elif isinstance(record, w.AgentCommitCreated):
            self.known_repos.add(record.repo)

    def _enough(self) -> bool:
        limits, totals = self.limits, self.totals
        return (
            self.node_runs >= limits.node_runs
            and self.agent_turns >= limits.agent_turns
            and self.checkpoints >= limits.checkpoints
            and self.rollbacks >= totals.rollbacks
            and self.cleanups >= totals.cleanups
            and (self.snapshot_seen or self.session_branches >= totals.session_branches)
            and (self.pushes >= totals.pushes or self.known_repos <= self.pushed_repos)
        )


def branch_lines(store: SessionTotalsReader, session_id: str) -> list[tuple[SessionInfo, str]]:
    """Every branch session of the run (nested ones too), in the order they were made."""
    lines: list[tuple[SessionInfo, str]] = []
    parents = [session_id]
    while parents:
        children = [
            child
            for parent in parents
            for child in store.child_sessions(parent)
            if child.metadata.spawn_reason == PARALLEL_SPAWN
        ]
        lines.extend((child, branch_label(child)) for child in children)
        parents = [child.session_id for child in children]
    lines.sort(key=lambda line: int(line[0].session_id))
    return lines


def _own(store: SessionStore, info: SessionInfo) -> Iterator[StoredTurn]:
    """A branch session's own turns (after its fork point), oldest first."""
    assert isinstance(store, SessionTotalsReader)
    stop = store.fork_point(info.session_id)
    own: list[StoredTurn] = []
    for turn in history(store, info.session_id, page_size=_PAGE):
        if turn.turn_id == stop:
            break
        own.append(turn)
    return reversed(own)


def _ending(store: SessionStore, session_id: str, totals: SessionTotals) -> Ending | None:
    if totals.lifecycle_turn_id is None:
        return None
    turn = store.get_turn(session_id, totals.lifecycle_turn_id)
    record = TurnView.of(turn, session_id).record
    if not isinstance(record, r.PipelineLifecycle):
        return None
    return Ending(record.event.value, record.error, record.duration_s, turn.created_at)


def _counts(
    store: SessionStore, totals: SessionTotals, branches: Iterable[tuple[SessionInfo, str]], totals_session: str
) -> SummaryCounts:
    """The whole run's counts: the main line's history and each branch session's own turns (the cost as budgets
    count it: a replay's also with the branches of the session it forks)."""
    assert isinstance(store, SessionTotalsReader)
    every = [totals, *(store.session_totals(info.session_id, own=True) for info, _label in branches)]
    return SummaryCounts(
        node_runs=sum(t.node_runs for t in every),
        agent_turns=sum(t.agent_turns for t in every),
        tokens=TokenUsage(sum(t.prompt_tokens for t in every), sum(t.completion_tokens for t in every)),
        checkpoints=totals.checkpoints,
        cost=session_spending(store, totals_session).cost,
    )

