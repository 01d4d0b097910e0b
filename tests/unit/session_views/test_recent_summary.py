"""The recent summary (`status SESSION`'s text view): the whole session's counts and its recent end, equal to the
full summary wherever they overlap, read from the head back only as far as needed."""

from __future__ import annotations

from typing import Any

import pytest

from orchestra_core.model import records as r
from orchestra_core.model import workspace_events as w
from orchestra_core.model.outcome import Outcome
from orchestra_core.ports.session_store import SessionMetadata, SessionStore, SessionTotalsReader
from orchestra_core.session import api
from orchestra_core.session.recent import RecentLimits, recent_session_summary
from orchestra_core.session.summary import SessionSummary, session_summary
from orchestra_core.testing.backends import ScriptedCodergenBackend
from tests.support.engine import graph, linear
from tests.support.sessions import RecordedRun
from tests.unit.session_views.test_session_summary import (
    FAILING,
    FAN,
    NESTED,
    RETRIED,
    TurningBackend,
    agent_turn,
)

SHA = "0123456789abcdef0123456789abcdef01234567"


def _comparable(summary: SessionSummary) -> dict[str, Any]:
    return {
        "info": summary.info, "nodes": summary.nodes, "turns": [t.turn_id for t in summary.turns],
        "agent_turns": summary.agent_turns[-50:], "repos": summary.repos, "fork": summary.fork_turn_id,
        "ending": summary.ending, "error": summary.error, "totals": summary.totals,
        "branches": sorted(summary.branches, key=lambda branch: int(branch.session_id)),
        "checkpoints": summary.checkpoints, "snapshots": summary.snapshots,
    }  # fmt: skip


@pytest.mark.parametrize(
    ("pipeline", "backend"),
    [
        (linear("a", "b"), TurningBackend({"a": [agent_turn("a", 0, (100, 10), commit=SHA), agent_turn("a", 1, (5, 1))]})),
        (RETRIED, ScriptedCodergenBackend({"a": ["retry", "fail", "success"]})),
        (FAILING, ScriptedCodergenBackend({"a": ["fail"]})),
        (FAN, TurningBackend({"l": [agent_turn("l", 0, (7, 3))], "r": [agent_turn("r", 0, (1, 1))]})),
        (NESTED, None),
    ],
    ids=["linear", "retried", "failing", "fan", "nested"],
)
def test_a_short_session_summarizes_as_the_full_summary(store: SessionStore, pipeline: Any, backend: Any) -> None:
    run = RecordedRun(store, backend=backend)
    run.run(graph(pipeline) if isinstance(pipeline, str) else pipeline)
    full = session_summary(store, run.session_id, full_agent_turns=50)
    assert _comparable(recent_session_summary(store, run.session_id)) == _comparable(full)


def test_a_replay_summarizes_as_the_full_summary(store: SessionStore) -> None:
    run = RecordedRun(store)
    run.run(linear("a", "b"))
    checkpoint = next(t for t in api.history(store, run.session_id) if t.type_id == "dev.orchestra.Checkpoint")
    replay = api.fork_session(store, run.session_id, checkpoint.turn_id).session_id
    api.append_record(store, replay, r.PipelineLifecycle(r.LifecycleEvent.RESUMED, "p"))
    recent = recent_session_summary(store, replay)
    assert _comparable(recent) == _comparable(session_summary(store, replay, full_agent_turns=50))
    assert recent.fork_turn_id == checkpoint.turn_id


def test_a_long_session_is_summarized_from_its_end(store: SessionStore) -> None:
    nodes = [f"n{index}" for index in range(40)]
    backend = TurningBackend({node: [agent_turn(node, 0, (10, 1))] for node in nodes})
    run = RecordedRun(store, backend=backend)
    assert run.run(linear(*nodes)).succeeded
    full = session_summary(store, run.session_id)
    limits = RecentLimits(node_runs=5, agent_turns=3, checkpoints=2)
    recent = recent_session_summary(store, run.session_id, limits=limits)
    assert recent.totals == full.totals  # the whole session's counts
    assert recent.totals.node_runs == 42 and recent.totals.agent_turns == 40
    assert recent.nodes == full.nodes[-5:]
    assert recent.agent_turns[-3:] == full.agent_turns[-3:]
    assert recent.checkpoints[-2:] == full.checkpoints[-2:]
    assert (recent.ending, recent.error, recent.info.status) == (full.ending, full.error, full.info.status)
    if isinstance(store, SessionTotalsReader):
        assert len(recent.turns) < len(full.turns) / 4  # read only the end
    else:  # a store without running totals (CXDB) gets the whole summary
        assert len(recent.turns) == len(full.turns)


def test_repos_pushes_rollbacks_and_cleanups_older_than_the_window_are_found(store: SessionStore) -> None:
    main = store.create_session(SessionMetadata(pipeline="p")).session_id
    base, pushed, head = "a" * 40, "b" * 40, "c" * 40
    branch = "orchestra/p/1"
    snapshot = r.WorkspaceSnapshot((r.RepoSnapshot("api", pushed, branch, base), r.RepoSnapshot("web", base, branch, base)))
    early = [
        r.PipelineLifecycle(r.LifecycleEvent.STARTED, "p"),
        w.SessionBranchCreated(repo="api", branch=branch, base_sha=base, base_ref="HEAD"),
        w.SessionBranchCreated(repo="web", branch=branch, base_sha=base, base_ref="main"),
        w.AgentCommitCreated(repo="api", sha=pushed, branch=branch, node_id="x", turn_number=0, message="m", files=()),
        w.RemotePushed(repo="api", branch=branch, sha=pushed, remote_url="file:///srv/api.git"),
        w.SessionRolledBack(repo="web", branch=branch, head_sha=base, base_sha=base),
        w.SessionCleanedUp(repo="web", branch=branch, head_sha=base, reason="merged"),
        r.CheckpointRecord("x", workspace_snapshot=snapshot),
    ]
    for record in early:
        api.append_record(store, main, record)
    for index in range(30):
        node = f"n{index}"
        for record in (
            r.NodeExecution(node, r.NodeEvent.STARTED, "codergen"),
            r.NodeExecution(node, r.NodeEvent.COMPLETED, "codergen", outcome=Outcome.success(), duration_s=1.0),
            r.CheckpointRecord(node, (node,)),
        ):
            api.append_record(store, main, record)
    api.append_record(
        store, main, w.AgentCommitCreated(repo="api", sha=head, branch=branch, node_id="n29", turn_number=0,
                                          message="m", files=()),
    )  # fmt: skip
    limits = RecentLimits(node_runs=2, agent_turns=0, checkpoints=1)
    recent = recent_session_summary(store, main, limits=limits)
    full = session_summary(store, main)
    assert recent.repos == full.repos
    assert [(repo.name, repo.head_sha, repo.pushed_sha) for repo in recent.repos] == [
        ("api", head, pushed), ("web", base, None),
    ]
    kinds = {type(t.record) for t in recent.turns}
    assert {w.SessionRolledBack, w.SessionCleanedUp} <= kinds
    assert recent.ending == full.ending and recent.ending is not None and recent.ending.event == "started"
