"""One stored turn as `status` and `attach` show it: its type's few telling fields, decoded without the bulk."""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime
from functools import cache
from typing import Any

import attrs
from attrs import frozen

from orchestra_core.model import records as r
from orchestra_core.model import workspace_events as w
from orchestra_core.model.failover import ModelFailover
from orchestra_core.model.money import Money, money_json
from orchestra_core.model.outcome import Outcome
from orchestra_core.model.pricing import recorded_cost
from orchestra_core.model.turn import AgentTurn, TokenUsage, TurnCommit
from orchestra_core.ports.session_store import StoredTurn
from orchestra_core.session.catalog import spec_for_type
from orchestra_core.session.codec import decode_record

# The fields worth reading per type; the others (transcripts, context snapshots, outcome maps) are
# skipped, so a long session is summarized without decoding what nobody looks at.
_SKIPPED_FIELDS: dict[type, Collection[str]] = {
    AgentTurn: ("messages", "agent_state_ref"),
    r.CheckpointRecord: (
        "context_snapshot", "node_outcomes", "logs", "retry_counters", "pipeline_blob", "completed_nodes",
        "context_removed",
    ),
}
# A brief view leaves out what only a listed agent turn shows, too (its tool calls, files and commits).
_BRIEF_SKIPPED_FIELDS: dict[type, Collection[str]] = {
    **_SKIPPED_FIELDS,
    AgentTurn: (*_SKIPPED_FIELDS[AgentTurn], "tool_calls", "files_written", "commits"),
}


def decode_fields(turn: StoredTurn, skip: Collection[str] = ()) -> object | None:
    """The turn's record without the fields named in `skip` (they take their defaults).

    Required fields are always decoded. Returns None for types Orchestra does not define.

    Raises:
        TurnDataError: The data does not fit the declared type.
    """
    if spec_for_type(turn.type_id) is None:
        return None
    return decode_record(turn, skip_tags=_dropped_tags(turn.type_id, frozenset(skip)))


@cache
def _dropped_tags(type_id: str, skip: frozenset[str]) -> frozenset[int]:
    spec = spec_for_type(type_id)
    assert spec is not None
    required = {a.name for a in attrs.fields(spec.record) if a.default is attrs.NOTHING}
    return frozenset(f.tag for f in spec.fields if f.name in skip and f.name not in required)


@frozen
class TurnView:
    """A turn of a session (or of one of its branch sessions) with its record, bulky fields left out.

    Attributes:
        turn_id: The turn's id.
        type_id: Its type, e.g. `dev.orchestra.AgentTurn`.
        session_id: The session whose line it was appended to (a branch session for branch turns).
        branch: The branch path (e.g. `fan:left`) for turns of branch sessions, None on the main line.
        created_at: When it was appended (UTC), None when the store does not know.
        record: The decoded record (AgentTurn without messages, Checkpoint without its context and
            outcomes), None for types Orchestra does not define.
    """

    turn_id: str
    type_id: str
    session_id: str
    branch: str | None
    created_at: datetime | None
    record: object | None

    @classmethod
    def of(cls, turn: StoredTurn, session_id: str, branch: str | None = None, *, brief: bool = False) -> TurnView:
        """The view of a stored turn; `brief` also leaves an AgentTurn's tool calls, files and commits out.

        Raises:
            TurnDataError: A dev.orchestra turn cannot be decoded.
        """
        spec = spec_for_type(turn.type_id)
        skipped = _BRIEF_SKIPPED_FIELDS if brief else _SKIPPED_FIELDS
        skip = skipped.get(spec.record, ()) if spec is not None else ()
        return cls(turn.turn_id, turn.type_id, session_id, branch, turn.created_at, decode_fields(turn, skip))

    @property
    def node_id(self) -> str | None:
        """The node the turn is about; a Checkpoint's is the node it was taken after (None before the start)."""
        if isinstance(self.record, r.CheckpointRecord):
            return self.record.current_node or None
        return getattr(self.record, "node_id", None)

    @property
    def commits(self) -> tuple[TurnCommit, ...]:
        """The commits an AgentTurn or AgentCommitCreated turn stands for."""
        record = self.record
        if isinstance(record, AgentTurn):
            return _agent_commits(record)
        if isinstance(record, w.AgentCommitCreated):
            return (TurnCommit(record.repo, record.sha, record.message, record.branch),)
        return ()

    def to_json(self) -> dict[str, Any]:
        """DESIGN.md's turn entry (`turn_id`, `type`, `node_id`, `turn_number`, `git_sha`, `commit_message`,
        `files_written`, `model`, `provider`), plus `session_id`, `branch`, `created_at` and the type's own
        fields (`event`, `status`, `duration_s`, `tokens`, `tools`, `commits`, `error`, `question`, ...)."""
        commits = self.commits
        record = self.record
        agent = record if isinstance(record, AgentTurn) else None
        entry: dict[str, Any] = {
            "turn_id": self.turn_id,
            "type": self.type_id,
            "node_id": self.node_id,
            "turn_number": getattr(record, "turn_number", None),
            "git_sha": commits[0].sha if commits else None,
            "commit_message": commits[0].message if commits else None,
            "files_written": _files_written(record),
            "model": agent.model if agent else None,
            "provider": agent.provider if agent else None,
            "session_id": self.session_id,
            "branch": self.branch,
            "created_at": self.created_at.isoformat() if self.created_at else None,
        }
        details = _DETAILS.get(type(record))
        if details is not None:
            entry.update(details(record))
        return entry


def tokens_json(usage: TokenUsage | None) -> dict[str, int] | None:
    """`{"prompt_tokens", "completion_tokens", "total_tokens", "cache_read_tokens", "cache_write_tokens"}` (the
    cached tokens are parts of the prompt tokens), or None."""
    if usage is None:
        return None
    return {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "total_tokens": usage.total_tokens,
        "cache_read_tokens": usage.cache_read_tokens,
        "cache_write_tokens": usage.cache_write_tokens,
    }


def turn_cost(record: AgentTurn) -> Money | None:
    """What an agent turn cost (None: unknown; nothing for a turn that used no tokens)."""
    return recorded_cost(record.cost_usd, record.token_usage)


def status_of(outcome: Outcome | None) -> str | None:
    """An outcome's status value, or None."""
    return outcome.status.value if outcome is not None else None


def _agent_commits(record: AgentTurn) -> tuple[TurnCommit, ...]:
    """The turn's commits; a record without `commits` (v2 single-repo) has at most its one SHA."""
    if record.commits or not record.git_sha:
        return record.commits
    return (TurnCommit("", record.git_sha, record.commit_message or ""),)


def _files_written(record: object) -> list[str]:
    if isinstance(record, AgentTurn):
        return list(record.files_written)
    if isinstance(record, w.AgentCommitCreated):
        return [f"{record.repo}:{path}" for path in record.files]
    if isinstance(record, w.UntrackedWritesCommitted):
        return [f"{record.repo}:{path}" for path in record.paths]
    return []


def _agent_turn(record: AgentTurn) -> dict[str, Any]:
    """The AgentTurn's own fields; `untracked` only on the safety net's turns and `denied` (the tool calls
    Orchestra's permission policy refused: tool and reason) only on turns that have one (so other entries keep
    their shape). `requested_model` and `fallback_reason` are null unless a fallback model answered (failover)."""
    denied = [{"tool": call.name, "reason": call.error} for call in record.tool_calls if call.denied]
    return {
        "requested_model": record.requested_model or None,
        "fallback_reason": record.fallback_reason or None,
        "tools": [call.name for call in record.tool_calls],
        "tokens": tokens_json(record.token_usage),
        "cost_usd": money_json(turn_cost(record)),
        "duration_s": record.duration_s,
        "commits": [
            {"repo": c.repo, "sha": c.sha, "message": c.message, "branch": c.branch} for c in _agent_commits(record)
        ],
    } | ({"untracked": True} if record.untracked else {}) | ({"denied": denied} if denied else {})


def _model_failover(record: ModelFailover) -> dict[str, Any]:
    return {
        "from_provider": record.from_provider, "from_model": record.from_model, "to_provider": record.to_provider,
        "to_model": record.to_model, "cause": record.cause, "reason": record.reason, "purpose": record.purpose,
    }


def _node_execution(record: r.NodeExecution) -> dict[str, Any]:
    outcome = record.outcome
    return {
        "event": record.event.value,
        "handler": record.handler_type,
        "attempt": record.attempt,
        "status": status_of(outcome),
        "duration_s": record.duration_s,
        "failure_reason": outcome.failure_reason if outcome and outcome.failure_reason else None,
        "tokens": tokens_json(record.total_token_usage),
        "agent_turns": record.agent_turn_count,
    }


def _lifecycle(record: r.PipelineLifecycle) -> dict[str, Any]:
    return {
        "event": record.event.value,
        "pipeline": record.pipeline_name,
        "status": record.status.value if record.status else None,
        "duration_s": record.duration_s,
        "error": record.error,
    }


def _checkpoint(record: r.CheckpointRecord) -> dict[str, Any]:
    snapshot = record.workspace_snapshot
    return {
        "status": record.run_status,
        "next_node": record.next_node,
        "node_visits": record.node_visits,
        "failure_reason": record.failure_reason or None,
        "repos": {s.repo_name: s.git_sha for s in snapshot.repo_snapshots} if snapshot else {},
    }


def _parallel(record: r.ParallelExecution) -> dict[str, Any]:
    return {
        "event": record.event.value,
        "branch_id": record.branch_id,
        "branch_count": record.branch_count,
        "join_policy": record.join_policy,
        "success_count": record.success_count,
        "failure_count": record.failure_count,
        "status": record.status.value if record.status else None,
        "branch_sessions": [
            *([record.branch_session_id] if record.branch_session_id else []),
            *record.branch_session_ids,
        ],
    }


def _human(record: r.HumanInteraction) -> dict[str, Any]:
    return {
        "question": record.question,
        "options": list(record.options),
        "answer": record.answer,
        "selected_option": record.selected_option,
    }


def _branch_created(record: w.SessionBranchCreated) -> dict[str, Any]:
    return {"repo": record.repo, "branch": record.branch, "base_sha": record.base_sha}


def _commit_created(record: w.AgentCommitCreated) -> dict[str, Any]:
    return {"repo": record.repo, "branch": record.branch}


def _untracked_committed(record: w.UntrackedWritesCommitted) -> dict[str, Any]:
    return {"repo": record.repo, "branch": record.branch, "sha": record.sha, "paths": list(record.paths)}


def _work_saved(record: w.UncommittedWorkSaved) -> dict[str, Any]:
    return {
        "repo": record.repo, "branch": record.branch, "worktree_path": record.worktree_path, "sha": record.sha,
        "abandoned_ref": record.abandoned_ref, "reason": record.reason, "paths": list(record.paths),
        "left_out": list(record.left_out),
    }


def _worktree_created(record: w.WorktreeCreated) -> dict[str, Any]:
    return {"repo": record.repo, "branch": record.branch, "path": record.path}


def _snapshot_recorded(record: w.WorkspaceSnapshotRecorded) -> dict[str, Any]:
    return {"checkpoint_turn_id": record.checkpoint_turn_id, "repos": record.heads}


def _remote_event(record: Any) -> dict[str, Any]:
    """RepoCloned, RepoFetched, RemotePushed, PushFailed: their stored fields (URLs and reasons redacted)."""
    return {name: getattr(record, name) for name in _REMOTE_FIELDS[type(record)]}


_REMOTE_FIELDS: dict[type, tuple[str, ...]] = {
    w.RepoCloned: ("repo", "url", "path", "depth"),
    w.RepoFetched: ("repo", "url"),
    w.RemotePushed: ("repo", "branch", "sha", "remote_url"),
    w.PushFailed: ("repo", "branch", "sha", "reason", "category"),
}


def _notification_failed(record: r.NotificationFailed) -> dict[str, Any]:
    return {"target": record.target, "event": record.event, "attempts": record.attempts, "reason": record.reason}


def _budget_warning(record: r.BudgetWarning) -> dict[str, Any]:
    return {"budget": record.budget, "spent": record.spent, "limit": record.limit, "message": record.message}


def _price_unknown(record: r.ModelPriceUnknown) -> dict[str, Any]:
    return {"model": record.model, "provider": record.provider, "message": record.message}


_DETAILS: dict[type, Any] = {
    r.BudgetWarning: _budget_warning,
    r.ModelPriceUnknown: _price_unknown,
    AgentTurn: _agent_turn,
    r.NodeExecution: _node_execution,
    r.PipelineLifecycle: _lifecycle,
    r.CheckpointRecord: _checkpoint,
    r.ParallelExecution: _parallel,
    r.HumanInteraction: _human,
    w.SessionBranchCreated: _branch_created,
    w.AgentCommitCreated: _commit_created,
    w.WorktreeCreated: _worktree_created,
    w.UntrackedWritesCommitted: _untracked_committed,
    w.UncommittedWorkSaved: _work_saved,
    w.WorkspaceSnapshotRecorded: _snapshot_recorded,
    ModelFailover: _model_failover,
    r.NotificationFailed: _notification_failed,
    **{kind: _remote_event for kind in _REMOTE_FIELDS},
}
