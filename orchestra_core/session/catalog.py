"""Every dev.orchestra.* type with its pinned field tags and enum numbers.

Tags and enum numbers are stored in every turn and published to CXDB: they never change and are never
reused. A new field gets a new tag and bumps its type's version (`since`); a removed field keeps its tag
reserved. `tests/unit/storage/test_type_tags_pinned.py` fails when any of this changes.
"""

from __future__ import annotations

from typing import Any

from orchestra_core.model import records as r
from orchestra_core.model import workspace_events as w
from orchestra_core.model.failover import ModelFailover
from orchestra_core.model.outcome import Outcome, StageStatus
from orchestra_core.model.turn import AgentTurn, TokenUsage, ToolCall, TurnCommit
from orchestra_core.session.schema import (
    ARRAY,
    BOOL,
    F64,
    MAP,
    REF,
    STRING,
    U8,
    U32,
    U64,
    EnumSpec,
    TypeSpec,
)
from orchestra_core.session.schema import field_spec as f

NAMESPACE = "dev.orchestra"


def _agent_turn(
    *, git_sha: str | None = None, commit_message: str | None = None, **fields: Any
) -> AgentTurn:
    """An AgentTurn as stored: `git_sha` and `commit_message` repeat its first commit for v2 readers; a
    turn written before `commits` existed keeps its one SHA as a commit."""
    if git_sha and not fields.get("commits"):
        fields["commits"] = (TurnCommit(repo="", sha=git_sha, message=commit_message or ""),)
    return AgentTurn(**fields)

STAGE_STATUS = EnumSpec(
    "dev.orchestra.StageStatus",
    {
        StageStatus.SUCCESS: 0,
        StageStatus.PARTIAL_SUCCESS: 1,
        StageStatus.RETRY: 2,
        StageStatus.FAIL: 3,
        StageStatus.SKIPPED: 4,
    },
)
LIFECYCLE_EVENT = EnumSpec(
    "dev.orchestra.LifecycleEvent",
    {
        r.LifecycleEvent.STARTED: 0,
        r.LifecycleEvent.COMPLETED: 1,
        r.LifecycleEvent.FAILED: 2,
        r.LifecycleEvent.RESUMED: 3,
        r.LifecycleEvent.INTERRUPTED: 4,
        r.LifecycleEvent.CANCELLED: 5,
        r.LifecycleEvent.BUDGET_EXCEEDED: 6,
    },
)
NODE_EVENT = EnumSpec(
    "dev.orchestra.NodeEvent",
    {
        r.NodeEvent.STARTED: 0,
        r.NodeEvent.COMPLETED: 1,
        r.NodeEvent.FAILED: 2,
        r.NodeEvent.RETRYING: 3,
        r.NodeEvent.SKIPPED: 4,
        r.NodeEvent.INTERRUPTED: 5,
    },
)
INTERACTION_MODE = EnumSpec(
    "dev.orchestra.InteractionMode", {r.InteractionMode.GATE: 0, r.InteractionMode.INTERACTIVE: 1}
)
PARALLEL_EVENT = EnumSpec(
    "dev.orchestra.ParallelEvent",
    {
        r.ParallelEvent.FAN_OUT: 0,
        r.ParallelEvent.BRANCH_STARTED: 1,
        r.ParallelEvent.BRANCH_COMPLETED: 2,
        r.ParallelEvent.FAN_IN: 3,
    },
)
ENUMS = (STAGE_STATUS, LIFECYCLE_EVENT, NODE_EVENT, INTERACTION_MODE, PARALLEL_EVENT)

# Nested record types (fields of turn types); also published, so CXDB can project `ref` fields.
TOOL_CALL = TypeSpec(
    "dev.orchestra.ToolCall",
    1,
    ToolCall,
    [
        f(1, "name", STRING),
        f(2, "args", MAP),
        f(3, "call_id", STRING),
        f(4, "result", STRING),
        f(5, "error", STRING),
    ],
)
TOKEN_USAGE = TypeSpec(
    "dev.orchestra.TokenUsage",
    2,
    TokenUsage,
    [
        f(1, "prompt_tokens", U64),
        f(2, "completion_tokens", U64),
        f(3, "cache_read_tokens", U64, since=2),
        f(4, "cache_write_tokens", U64, since=2),
    ],
)
TURN_COMMIT = TypeSpec(
    "dev.orchestra.TurnCommit",
    1,
    TurnCommit,
    [f(1, "repo", STRING), f(2, "sha", STRING), f(3, "message", STRING), f(4, "branch", STRING)],
)
OUTCOME = TypeSpec(
    "dev.orchestra.Outcome",
    1,
    Outcome,
    [
        f(1, "status", U8, enum=STAGE_STATUS),
        f(2, "preferred_label", STRING),
        f(3, "suggested_next_ids", ARRAY, items=STRING),
        f(4, "context_updates", MAP),
        f(5, "notes", STRING),
        f(6, "failure_reason", STRING),
    ],
)
REPO_SNAPSHOT = TypeSpec(
    "dev.orchestra.RepoSnapshot",
    1,
    r.RepoSnapshot,
    [f(1, "repo_name", STRING), f(2, "git_sha", STRING), f(3, "branch", STRING), f(4, "base_sha", STRING)],
)

# Turn types.
WORKSPACE_SNAPSHOT = TypeSpec(
    "dev.orchestra.WorkspaceSnapshot",
    1,
    r.WorkspaceSnapshot,
    [f(1, "repo_snapshots", ARRAY, ref=REPO_SNAPSHOT), f(2, "node_id", STRING)],
)
PIPELINE_LIFECYCLE = TypeSpec(
    "dev.orchestra.PipelineLifecycle",
    2,
    r.PipelineLifecycle,
    [
        f(1, "event", U8, enum=LIFECYCLE_EVENT),
        f(2, "pipeline_name", STRING),
        f(3, "goal", STRING),
        f(4, "status", U8, enum=STAGE_STATUS),
        f(5, "duration_s", F64),
        f(6, "error", STRING),
        f(7, "dot_path", STRING),
        f(8, "dot_blob", STRING),
        f(9, "logs_root", STRING),
        f(10, "initial_context", MAP, since=2),
    ],
)
NODE_EXECUTION = TypeSpec(
    "dev.orchestra.NodeExecution",
    1,
    r.NodeExecution,
    [
        f(1, "node_id", STRING),
        f(2, "event", U8, enum=NODE_EVENT),
        f(3, "handler_type", STRING),
        f(4, "attempt", U32),
        f(5, "outcome", REF, ref=OUTCOME),
        f(6, "duration_s", F64),
        f(7, "total_token_usage", REF, ref=TOKEN_USAGE),
        f(8, "agent_turn_count", U32),
    ],
)
AGENT_TURN = TypeSpec(
    "dev.orchestra.AgentTurn",
    4,
    AgentTurn,
    [
        f(1, "node_id", STRING),
        f(2, "turn_number", U32),
        f(3, "model", STRING),
        f(4, "provider", STRING),
        f(5, "messages", ARRAY, items=MAP),
        f(6, "tool_calls", ARRAY, ref=TOOL_CALL),
        f(7, "files_written", ARRAY, items=STRING),
        f(8, "token_usage", REF, ref=TOKEN_USAGE),
        f(9, "agent_state_ref", STRING),
        f(10, "duration_s", F64),
        f(11, "git_sha", STRING, since=2),
        f(12, "commit_message", STRING, since=2),
        f(13, "commits", ARRAY, ref=TURN_COMMIT, since=2),
        f(14, "untracked", BOOL, since=3),
        f(15, "cost_usd", F64, since=4),
        f(16, "requested_model", STRING, since=4),
        f(17, "fallback_reason", STRING, since=4),
    ],
    build=_agent_turn,
)
CHECKPOINT = TypeSpec(
    "dev.orchestra.Checkpoint",
    4,
    r.CheckpointRecord,
    [
        f(1, "current_node", STRING),
        f(2, "completed_nodes", ARRAY, items=STRING),
        f(3, "context_snapshot", MAP),
        f(4, "retry_counters", MAP),
        f(5, "agent_turn_number", U32),
        f(6, "node_outcomes", MAP, ref=OUTCOME, since=2),
        f(7, "logs", ARRAY, items=STRING, since=2),
        f(8, "next_node", STRING, since=2),
        f(9, "run_status", STRING, since=2),
        f(10, "failure_reason", STRING, since=2),
        f(11, "node_visits", U32, since=2),
        f(12, "loop_restarts", U32, since=2),
        f(13, "workspace_snapshot", REF, ref=WORKSPACE_SNAPSHOT, since=3),
        f(14, "pipeline_path", STRING, since=3),
        f(15, "pipeline_blob", STRING, since=3),
        f(16, "base_turn_id", STRING, since=4),
        f(17, "context_removed", ARRAY, items=STRING, since=4),
        f(18, "chain_length", U32, since=4),
    ],
)
HUMAN_INTERACTION = TypeSpec(
    "dev.orchestra.HumanInteraction",
    1,
    r.HumanInteraction,
    [
        f(1, "node_id", STRING),
        f(2, "mode", U8, enum=INTERACTION_MODE),
        f(3, "question", STRING),
        f(4, "options", ARRAY, items=STRING),
        f(5, "answer", STRING),
        f(6, "selected_option", STRING),
        f(7, "interviewer", STRING),
    ],
)
PARALLEL_EXECUTION = TypeSpec(
    "dev.orchestra.ParallelExecution",
    1,
    r.ParallelExecution,
    [
        f(1, "node_id", STRING),
        f(2, "event", U8, enum=PARALLEL_EVENT),
        f(3, "branch_count", U32),
        f(4, "branch_id", STRING),
        f(5, "join_policy", STRING),
        f(6, "success_count", U32),
        f(7, "failure_count", U32),
        f(8, "branch_session_id", STRING),
        f(9, "status", U8, enum=STAGE_STATUS),
        f(10, "branch_session_ids", ARRAY, items=STRING),
    ],
)
SESSION_BRANCH_CREATED = TypeSpec(
    "dev.orchestra.SessionBranchCreated",
    1,
    w.SessionBranchCreated,
    [f(1, "repo", STRING), f(2, "branch", STRING), f(3, "base_sha", STRING), f(4, "base_ref", STRING)],
)
AGENT_COMMIT_CREATED = TypeSpec(
    "dev.orchestra.AgentCommitCreated",
    1,
    w.AgentCommitCreated,
    [
        f(1, "repo", STRING),
        f(2, "sha", STRING),
        f(3, "branch", STRING),
        f(4, "node_id", STRING),
        f(5, "turn_number", U32),
        f(6, "message", STRING),
        f(7, "files", ARRAY, items=STRING),
    ],
)
WORKTREE_CREATED = TypeSpec(
    "dev.orchestra.WorktreeCreated",
    1,
    w.WorktreeCreated,
    [
        f(1, "repo", STRING),
        f(2, "path", STRING),
        f(3, "branch", STRING),
        f(4, "base_sha", STRING),
        f(5, "node_id", STRING),
    ],
)
WORKTREE_MERGED = TypeSpec(
    "dev.orchestra.WorktreeMerged",
    2,
    w.WorktreeMerged,
    [
        f(1, "repo", STRING),
        f(2, "branch", STRING),
        f(3, "into_branch", STRING),
        f(4, "merge_sha", STRING),
        f(5, "node_id", STRING),
        f(6, "conflicting_files", ARRAY, items=STRING, since=2),
    ],
)
WORKTREE_MERGE_CONFLICT = TypeSpec(
    "dev.orchestra.WorktreeMergeConflict",
    1,
    w.WorktreeMergeConflict,
    [
        f(1, "repo", STRING),
        f(2, "branch", STRING),
        f(3, "into_branch", STRING),
        f(4, "conflicting_files", ARRAY, items=STRING),
        f(5, "node_id", STRING),
        f(6, "detail", STRING),
    ],
)
UNTRACKED_WRITES_COMMITTED = TypeSpec(
    "dev.orchestra.UntrackedWritesCommitted",
    1,
    w.UntrackedWritesCommitted,
    [
        f(1, "repo", STRING),
        f(2, "node_id", STRING),
        f(3, "turn_number", U32),
        f(4, "paths", ARRAY, items=STRING),
        f(5, "sha", STRING),
        f(6, "branch", STRING),
    ],
)
# v1 (tags 1-2) was defined and published but never produced; v2 adds the checkpoint's turn.
WORKSPACE_SNAPSHOT_RECORDED = TypeSpec(
    "dev.orchestra.WorkspaceSnapshotRecorded",
    2,
    w.WorkspaceSnapshotRecorded,
    [
        f(1, "node_id", STRING),
        f(2, "snapshot", REF, ref=WORKSPACE_SNAPSHOT),
        f(3, "checkpoint_turn_id", STRING, since=2),
    ],
)
REPO_CLONED = TypeSpec(
    "dev.orchestra.RepoCloned",
    1,
    w.RepoCloned,
    [f(1, "repo", STRING), f(2, "url", STRING), f(3, "path", STRING), f(4, "depth", U32)],
)
REPO_FETCHED = TypeSpec("dev.orchestra.RepoFetched", 1, w.RepoFetched, [f(1, "repo", STRING), f(2, "url", STRING)])
REMOTE_PUSHED = TypeSpec(
    "dev.orchestra.RemotePushed",
    1,
    w.RemotePushed,
    [f(1, "repo", STRING), f(2, "branch", STRING), f(3, "sha", STRING), f(4, "remote_url", STRING)],
)
PUSH_FAILED = TypeSpec(
    "dev.orchestra.PushFailed",
    1,
    w.PushFailed,
    [
        f(1, "repo", STRING),
        f(2, "branch", STRING),
        f(3, "sha", STRING),
        f(4, "reason", STRING),
        f(5, "category", STRING),
    ],
)
SESSION_ROLLED_BACK = TypeSpec(
    "dev.orchestra.SessionRolledBack",
    1,
    w.SessionRolledBack,
    [
        f(1, "repo", STRING),
        f(2, "branch", STRING),
        f(3, "head_sha", STRING),
        f(4, "base_sha", STRING),
        f(5, "abandoned_ref", STRING),
    ],
)
SESSION_CLEANED_UP = TypeSpec(
    "dev.orchestra.SessionCleanedUp",
    1,
    w.SessionCleanedUp,
    [
        f(1, "repo", STRING),
        f(2, "branch", STRING),
        f(3, "head_sha", STRING),
        f(4, "worktree_path", STRING),
        f(5, "reason", STRING),
        f(6, "abandoned_ref", STRING),
    ],
)
UNCOMMITTED_WORK_SAVED = TypeSpec(
    "dev.orchestra.UncommittedWorkSaved",
    1,
    w.UncommittedWorkSaved,
    [
        f(1, "repo", STRING),
        f(2, "worktree_path", STRING),
        f(3, "branch", STRING),
        f(4, "sha", STRING),
        f(5, "abandoned_ref", STRING),
        f(6, "reason", STRING),
        f(7, "paths", ARRAY, items=STRING),
        f(8, "left_out", ARRAY, items=STRING),
    ],
)
MODEL_FAILOVER = TypeSpec(
    "dev.orchestra.ModelFailover",
    1,
    ModelFailover,
    [
        f(1, "node_id", STRING),
        f(2, "from_provider", STRING),
        f(3, "from_model", STRING),
        f(4, "to_provider", STRING),
        f(5, "to_model", STRING),
        f(6, "cause", STRING),
        f(7, "reason", STRING),
        f(8, "purpose", STRING),
    ],
)
NOTIFICATION_FAILED = TypeSpec(
    "dev.orchestra.NotificationFailed",
    1,
    r.NotificationFailed,
    [f(1, "target", STRING), f(2, "event", STRING), f(3, "attempts", U32), f(4, "reason", STRING)],
)
BUDGET_WARNING = TypeSpec(
    "dev.orchestra.BudgetWarning",
    1,
    r.BudgetWarning,
    [
        f(1, "budget", STRING),
        f(2, "spent", STRING),
        f(3, "limit", STRING),
        f(4, "message", STRING),
        f(5, "node_id", STRING),
    ],
)
MODEL_PRICE_UNKNOWN = TypeSpec(
    "dev.orchestra.ModelPriceUnknown",
    1,
    r.ModelPriceUnknown,
    [f(1, "model", STRING), f(2, "provider", STRING), f(3, "node_id", STRING), f(4, "message", STRING)],
)
NESTED_TYPES = (TOOL_CALL, TOKEN_USAGE, TURN_COMMIT, OUTCOME, REPO_SNAPSHOT)
TURN_TYPES = (
    PIPELINE_LIFECYCLE,
    NODE_EXECUTION,
    AGENT_TURN,
    CHECKPOINT,
    HUMAN_INTERACTION,
    PARALLEL_EXECUTION,
    WORKSPACE_SNAPSHOT,
    SESSION_BRANCH_CREATED,
    AGENT_COMMIT_CREATED,
    WORKTREE_CREATED,
    WORKTREE_MERGED,
    WORKTREE_MERGE_CONFLICT,
    UNTRACKED_WRITES_COMMITTED,
    WORKSPACE_SNAPSHOT_RECORDED,
    REPO_CLONED,
    REPO_FETCHED,
    REMOTE_PUSHED,
    PUSH_FAILED,
    SESSION_ROLLED_BACK,
    SESSION_CLEANED_UP,
    UNCOMMITTED_WORK_SAVED,
    MODEL_FAILOVER,
    NOTIFICATION_FAILED,
    BUDGET_WARNING,
    MODEL_PRICE_UNKNOWN,
)
# Types that were defined once and are gone; their ids are never used again. (WorkspaceSnapshotRecorded,
# retired in #11 before anything produced it, is back since #13 with its v1 tags unchanged.)
RETIRED_TYPE_IDS: tuple[str, ...] = ()

_BY_ID = {spec.type_id: spec for spec in TURN_TYPES}
_BY_RECORD = {spec.record: spec for spec in TURN_TYPES}


def spec_for_type(type_id: str) -> TypeSpec | None:
    """The turn type with this id, None for types Orchestra does not define."""
    return _BY_ID.get(type_id)


def has_turn_type(record: object) -> bool:
    """Whether the object is one of the turn records (an event without a turn type is only reported)."""
    return type(record) in _BY_RECORD


def spec_for_record(record: object) -> TypeSpec:
    """The turn type of a record instance.

    Raises:
        TypeError: The object is not one of the turn records.
    """
    try:
        return _BY_RECORD[type(record)]
    except KeyError:
        raise TypeError(f"{type(record).__name__} is not a dev.orchestra turn record") from None
