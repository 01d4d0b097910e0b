"""A long session built fast: node visits shaped like an agent run, appended through the store's API in batches."""

from __future__ import annotations

from orchestra_core.model import records as r
from orchestra_core.model.outcome import Outcome
from orchestra_core.model.turn import AgentTurn, TokenUsage, ToolCall, TurnCommit
from orchestra_core.model.workspace_events import AgentCommitCreated, SessionBranchCreated
from orchestra_core.ports.session_store import SessionMetadata, SessionStore, TurnAppend
from orchestra_core.session.codec import encode_record

TURNS_PER_VISIT = 7


def _appends(session: str, records: list[object]) -> list[TurnAppend]:
    encoded = [encode_record(record) for record in records]
    return [TurnAppend(session, e.type_id, e.type_version, e.data) for e in encoded]


def _visit(visit: int, transcript: tuple[dict[str, str], ...] = ()) -> list[object]:
    node = f"n{visit % 50}"
    sha = f"{visit:040x}"
    records: list[object] = [r.NodeExecution(node, r.NodeEvent.STARTED, "codergen")]
    for number in range(3):
        commit = (TurnCommit("project", sha, "Change things", "orchestra/big/1"),) if number == 0 else ()
        records.append(
            AgentTurn(
                node, number, "worker", "anthropic", messages=transcript,
                tool_calls=(ToolCall("project:write-file", {"path": f"f{number}.py", "content": "x = 1\n"}),),
                files_written=(f"project:f{number}.py",), token_usage=TokenUsage(1500, 80), duration_s=1.2,
                commits=commit,
            )
        )  # fmt: skip
    snapshot = r.WorkspaceSnapshot((r.RepoSnapshot("project", sha, "orchestra/big/1", "b" * 40),), node)
    records += [
        AgentCommitCreated(
            repo="project",
            branch="orchestra/big/1",
            sha=sha,
            message="Change things",
            node_id=node,
            turn_number=0,
        ),
        r.NodeExecution(node, r.NodeEvent.COMPLETED, "codergen", outcome=Outcome.success(), duration_s=4.0),
        r.CheckpointRecord(node, (node,), {"last_stage": node}, workspace_snapshot=snapshot),
    ]
    return records


def build_long_session(
    store: SessionStore, turns: int, *, visits_per_batch: int = 200, transcript: tuple[dict[str, str], ...] = ()
) -> str:
    """A finished session of about `turns` turns shaped like a long agent run, appended in batches; each agent
    turn carries `transcript` as its messages."""
    session = store.create_session(SessionMetadata(pipeline="big", title="a long run")).session_id
    start = [
        r.PipelineLifecycle(r.LifecycleEvent.STARTED, "big"),
        SessionBranchCreated(repo="project", branch="orchestra/big/1", base_sha="b" * 40, base_ref="main"),
    ]
    store.append_batch(_appends(session, start))
    visits = max(1, (turns - 3) // TURNS_PER_VISIT)
    for first in range(0, visits, visits_per_batch):
        batch = [
            record
            for visit in range(first, min(visits, first + visits_per_batch))
            for record in _visit(visit, transcript)
        ]
        store.append_batch(_appends(session, batch))
    store.append_batch(
        _appends(session, [r.PipelineLifecycle(r.LifecycleEvent.COMPLETED, "big", duration_s=9.0)])
    )
    return session
