"""Conversion between the engine's Checkpoint and the stored `dev.orchestra.Checkpoint` record."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

from attrs import frozen

from orchestra_core.engine.checkpoint import Checkpoint as EngineCheckpoint
from orchestra_core.engine.checkpoint import RunStatus
from orchestra_core.session.records import Checkpoint, RepoSnapshot, WorkspaceSnapshot


@frozen
class RepoHead:
    """A workspace repo's session branch at a checkpoint."""

    branch: str
    sha: str
    base_sha: str = ""


@frozen
class PipelineSource:
    """Where a run's pipeline came from: its file and the blob holding the DOT text as it ran."""

    path: str | None = None
    blob: str | None = None


def to_record(
    checkpoint: EngineCheckpoint,
    *,
    repos: Mapping[str, RepoHead] | None = None,
    source: PipelineSource | None = None,
) -> Checkpoint:
    """The stored form of an engine checkpoint, with every workspace repo's head and the pipeline source."""
    source = source or PipelineSource()
    return Checkpoint(
        current_node=checkpoint.current_node,
        completed_nodes=checkpoint.completed_nodes,
        context_snapshot=plain_values(checkpoint.context),
        retry_counters=dict(checkpoint.node_retries),
        node_outcomes=dict(checkpoint.node_outcomes),
        logs=checkpoint.logs,
        next_node=checkpoint.next_node,
        run_status=checkpoint.status.value,
        failure_reason=checkpoint.failure_reason,
        node_visits=checkpoint.node_visits,
        loop_restarts=checkpoint.loop_restarts,
        workspace_snapshot=_snapshot(checkpoint, repos) if repos else None,
        pipeline_path=source.path,
        pipeline_blob=source.blob,
    )


def from_record(record: Checkpoint, created_at: datetime | None) -> EngineCheckpoint:
    """The engine checkpoint a stored record describes (to resume or replay from it)."""
    snapshot = record.workspace_snapshot.sha_by_repo() if record.workspace_snapshot else {}
    return EngineCheckpoint(
        current_node=record.current_node,
        completed_nodes=record.completed_nodes,
        node_outcomes=record.node_outcomes,
        node_retries=record.retry_counters,
        context=record.context_snapshot,
        timestamp=created_at or datetime.now(timezone.utc),
        next_node=record.next_node,
        status=RunStatus(record.run_status),
        failure_reason=record.failure_reason,
        logs=record.logs,
        workspace_snapshot=snapshot,
        node_visits=record.node_visits,
        loop_restarts=record.loop_restarts,
    )


def repo_heads(record: Checkpoint) -> dict[str, RepoHead]:
    """Each workspace repo's branch and head as the checkpoint recorded them."""
    if record.workspace_snapshot is None:
        return {}
    return {
        repo.repo_name: RepoHead(repo.branch, repo.git_sha, repo.base_sha or "")
        for repo in record.workspace_snapshot.repo_snapshots
    }


def plain_values(values: Mapping[str, Any]) -> dict[str, Any]:
    """Context values reduced to what every store can hold (JSON types; anything else as its text)."""
    try:
        return json.loads(json.dumps(dict(values), default=str))
    except (TypeError, ValueError):
        return {str(key): str(value) for key, value in values.items()}


def _snapshot(checkpoint: EngineCheckpoint, repos: Mapping[str, RepoHead]) -> WorkspaceSnapshot:
    heads = checkpoint.workspace_snapshot
    return WorkspaceSnapshot(
        repo_snapshots=tuple(
            RepoSnapshot(name, heads.get(name, head.sha), head.branch, head.base_sha or None)
            for name, head in sorted(repos.items())
        ),
        node_id=checkpoint.current_node or None,
    )
