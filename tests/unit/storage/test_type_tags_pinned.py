"""Field tags, kinds, versions and enum numbers are pinned forever: stored turns and CXDB depend on them.

If this fails you changed the meaning of stored data. Do not edit a pinned entry: add a new field with a
new tag (and bump the type's version), or a new enum number. Then add the new entry here.
"""

from __future__ import annotations

from orchestra_core.session.catalog import ENUMS, NESTED_TYPES, RETIRED_TYPE_IDS, TURN_TYPES
from orchestra_core.session.cursor import STATUS_CODES
from orchestra_core.session.schema import CONTEXT_METADATA_TAG, SESSION_CURSOR_TAG

# type id -> (current version, {tag: (name, kind, since version, enum id | nested type id | array items)})
PINNED_TYPES = {
    "dev.orchestra.ToolCall": (
        1,
        {
            1: ("name", "string", 1, None),
            2: ("args", "map", 1, None),
            3: ("call_id", "string", 1, None),
            4: ("result", "string", 1, None),
            5: ("error", "string", 1, None),
        },
    ),
    "dev.orchestra.TokenUsage": (
        2,
        {
            1: ("prompt_tokens", "u64", 1, None),
            2: ("completion_tokens", "u64", 1, None),
            3: ("cache_read_tokens", "u64", 2, None),
            4: ("cache_write_tokens", "u64", 2, None),
        },
    ),
    "dev.orchestra.TurnCommit": (
        1,
        {
            1: ("repo", "string", 1, None),
            2: ("sha", "string", 1, None),
            3: ("message", "string", 1, None),
            4: ("branch", "string", 1, None),
        },
    ),
    "dev.orchestra.Outcome": (
        1,
        {
            1: ("status", "u8", 1, "dev.orchestra.StageStatus"),
            2: ("preferred_label", "string", 1, None),
            3: ("suggested_next_ids", "array", 1, "string"),
            4: ("context_updates", "map", 1, None),
            5: ("notes", "string", 1, None),
            6: ("failure_reason", "string", 1, None),
        },
    ),
    "dev.orchestra.RepoSnapshot": (
        1,
        {
            1: ("repo_name", "string", 1, None),
            2: ("git_sha", "string", 1, None),
            3: ("branch", "string", 1, None),
            4: ("base_sha", "string", 1, None),
        },
    ),
    "dev.orchestra.PipelineLifecycle": (
        2,
        {
            1: ("event", "u8", 1, "dev.orchestra.LifecycleEvent"),
            2: ("pipeline_name", "string", 1, None),
            3: ("goal", "string", 1, None),
            4: ("status", "u8", 1, "dev.orchestra.StageStatus"),
            5: ("duration_s", "f64", 1, None),
            6: ("error", "string", 1, None),
            7: ("dot_path", "string", 1, None),
            8: ("dot_blob", "string", 1, None),
            9: ("logs_root", "string", 1, None),
            10: ("initial_context", "map", 2, None),
        },
    ),
    "dev.orchestra.NodeExecution": (
        1,
        {
            1: ("node_id", "string", 1, None),
            2: ("event", "u8", 1, "dev.orchestra.NodeEvent"),
            3: ("handler_type", "string", 1, None),
            4: ("attempt", "u32", 1, None),
            5: ("outcome", "ref", 1, "dev.orchestra.Outcome"),
            6: ("duration_s", "f64", 1, None),
            7: ("total_token_usage", "ref", 1, "dev.orchestra.TokenUsage"),
            8: ("agent_turn_count", "u32", 1, None),
        },
    ),
    "dev.orchestra.AgentTurn": (
        4,
        {
            1: ("node_id", "string", 1, None),
            2: ("turn_number", "u32", 1, None),
            3: ("model", "string", 1, None),
            4: ("provider", "string", 1, None),
            5: ("messages", "array", 1, "map"),
            6: ("tool_calls", "array", 1, "dev.orchestra.ToolCall"),
            7: ("files_written", "array", 1, "string"),
            8: ("token_usage", "ref", 1, "dev.orchestra.TokenUsage"),
            9: ("agent_state_ref", "string", 1, None),
            10: ("duration_s", "f64", 1, None),
            11: ("git_sha", "string", 2, None),
            12: ("commit_message", "string", 2, None),
            13: ("commits", "array", 2, "dev.orchestra.TurnCommit"),
            14: ("untracked", "bool", 3, None),
            15: ("cost_usd", "f64", 4, None),
            16: ("requested_model", "string", 4, None),
            17: ("fallback_reason", "string", 4, None),
        },
    ),
    "dev.orchestra.Checkpoint": (
        4,
        {
            1: ("current_node", "string", 1, None),
            2: ("completed_nodes", "array", 1, "string"),
            3: ("context_snapshot", "map", 1, None),
            4: ("retry_counters", "map", 1, None),
            5: ("agent_turn_number", "u32", 1, None),
            6: ("node_outcomes", "map", 2, "dev.orchestra.Outcome"),
            7: ("logs", "array", 2, "string"),
            8: ("next_node", "string", 2, None),
            9: ("run_status", "string", 2, None),
            10: ("failure_reason", "string", 2, None),
            11: ("node_visits", "u32", 2, None),
            12: ("loop_restarts", "u32", 2, None),
            13: ("workspace_snapshot", "ref", 3, "dev.orchestra.WorkspaceSnapshot"),
            14: ("pipeline_path", "string", 3, None),
            15: ("pipeline_blob", "string", 3, None),
            16: ("base_turn_id", "string", 4, None),
            17: ("context_removed", "array", 4, "string"),
            18: ("chain_length", "u32", 4, None),
        },
    ),
    "dev.orchestra.HumanInteraction": (
        1,
        {
            1: ("node_id", "string", 1, None),
            2: ("mode", "u8", 1, "dev.orchestra.InteractionMode"),
            3: ("question", "string", 1, None),
            4: ("options", "array", 1, "string"),
            5: ("answer", "string", 1, None),
            6: ("selected_option", "string", 1, None),
            7: ("interviewer", "string", 1, None),
        },
    ),
    "dev.orchestra.ParallelExecution": (
        1,
        {
            1: ("node_id", "string", 1, None),
            2: ("event", "u8", 1, "dev.orchestra.ParallelEvent"),
            3: ("branch_count", "u32", 1, None),
            4: ("branch_id", "string", 1, None),
            5: ("join_policy", "string", 1, None),
            6: ("success_count", "u32", 1, None),
            7: ("failure_count", "u32", 1, None),
            8: ("branch_session_id", "string", 1, None),
            9: ("status", "u8", 1, "dev.orchestra.StageStatus"),
            10: ("branch_session_ids", "array", 1, "string"),
        },
    ),
    "dev.orchestra.WorkspaceSnapshot": (
        1,
        {
            1: ("repo_snapshots", "array", 1, "dev.orchestra.RepoSnapshot"),
            2: ("node_id", "string", 1, None),
        },
    ),
    "dev.orchestra.SessionBranchCreated": (
        1,
        {
            1: ("repo", "string", 1, None),
            2: ("branch", "string", 1, None),
            3: ("base_sha", "string", 1, None),
            4: ("base_ref", "string", 1, None),
        },
    ),
    "dev.orchestra.AgentCommitCreated": (
        1,
        {
            1: ("repo", "string", 1, None),
            2: ("sha", "string", 1, None),
            3: ("branch", "string", 1, None),
            4: ("node_id", "string", 1, None),
            5: ("turn_number", "u32", 1, None),
            6: ("message", "string", 1, None),
            7: ("files", "array", 1, "string"),
        },
    ),
    "dev.orchestra.WorktreeCreated": (
        1,
        {
            1: ("repo", "string", 1, None),
            2: ("path", "string", 1, None),
            3: ("branch", "string", 1, None),
            4: ("base_sha", "string", 1, None),
            5: ("node_id", "string", 1, None),
        },
    ),
    "dev.orchestra.WorktreeMerged": (
        2,
        {
            1: ("repo", "string", 1, None),
            2: ("branch", "string", 1, None),
            3: ("into_branch", "string", 1, None),
            4: ("merge_sha", "string", 1, None),
            5: ("node_id", "string", 1, None),
            6: ("conflicting_files", "array", 2, "string"),
        },
    ),
    "dev.orchestra.WorktreeMergeConflict": (
        1,
        {
            1: ("repo", "string", 1, None),
            2: ("branch", "string", 1, None),
            3: ("into_branch", "string", 1, None),
            4: ("conflicting_files", "array", 1, "string"),
            5: ("node_id", "string", 1, None),
            6: ("detail", "string", 1, None),
        },
    ),
    "dev.orchestra.UntrackedWritesCommitted": (
        1,
        {
            1: ("repo", "string", 1, None),
            2: ("node_id", "string", 1, None),
            3: ("turn_number", "u32", 1, None),
            4: ("paths", "array", 1, "string"),
            5: ("sha", "string", 1, None),
            6: ("branch", "string", 1, None),
        },
    ),
    "dev.orchestra.WorkspaceSnapshotRecorded": (
        2,
        {
            1: ("node_id", "string", 1, None),
            2: ("snapshot", "ref", 1, "dev.orchestra.WorkspaceSnapshot"),
            3: ("checkpoint_turn_id", "string", 2, None),
        },
    ),    "dev.orchestra.RepoCloned": (
        1,
        {
            1: ("repo", "string", 1, None),
            2: ("url", "string", 1, None),
            3: ("path", "string", 1, None),
            4: ("depth", "u32", 1, None),
        },
    ),
    "dev.orchestra.RepoFetched": (1, {1: ("repo", "string", 1, None), 2: ("url", "string", 1, None)}),
    "dev.orchestra.RemotePushed": (
        1,
        {
            1: ("repo", "string", 1, None),
            2: ("branch", "string", 1, None),
            3: ("sha", "string", 1, None),
            4: ("remote_url", "string", 1, None),
        },
    ),
    "dev.orchestra.PushFailed": (
        1,
        {
            1: ("repo", "string", 1, None),
            2: ("branch", "string", 1, None),
            3: ("sha", "string", 1, None),
            4: ("reason", "string", 1, None),
            5: ("category", "string", 1, None),
        },
    ),
    "dev.orchestra.SessionRolledBack": (
        1,
        {
            1: ("repo", "string", 1, None),
            2: ("branch", "string", 1, None),
            3: ("head_sha", "string", 1, None),
            4: ("base_sha", "string", 1, None),
            5: ("abandoned_ref", "string", 1, None),
        },
    ),
    "dev.orchestra.SessionCleanedUp": (
        1,
        {
            1: ("repo", "string", 1, None),
            2: ("branch", "string", 1, None),
            3: ("head_sha", "string", 1, None),
            4: ("worktree_path", "string", 1, None),
            5: ("reason", "string", 1, None),
            6: ("abandoned_ref", "string", 1, None),
        },
    ),
    "dev.orchestra.UncommittedWorkSaved": (
        1,
        {
            1: ("repo", "string", 1, None),
            2: ("worktree_path", "string", 1, None),
            3: ("branch", "string", 1, None),
            4: ("sha", "string", 1, None),
            5: ("abandoned_ref", "string", 1, None),
            6: ("reason", "string", 1, None),
            7: ("paths", "array", 1, "string"),
            8: ("left_out", "array", 1, "string"),
        },
    ),
    "dev.orchestra.ModelFailover": (
        1,
        {
            1: ("node_id", "string", 1, None),
            2: ("from_provider", "string", 1, None),
            3: ("from_model", "string", 1, None),
            4: ("to_provider", "string", 1, None),
            5: ("to_model", "string", 1, None),
            6: ("cause", "string", 1, None),
            7: ("reason", "string", 1, None),
            8: ("purpose", "string", 1, None),
        },
    ),
    "dev.orchestra.NotificationFailed": (
        1,
        {
            1: ("target", "string", 1, None),
            2: ("event", "string", 1, None),
            3: ("attempts", "u32", 1, None),
            4: ("reason", "string", 1, None),
        },
    ),
    "dev.orchestra.BudgetWarning": (
        1,
        {
            1: ("budget", "string", 1, None),
            2: ("spent", "string", 1, None),
            3: ("limit", "string", 1, None),
            4: ("message", "string", 1, None),
            5: ("node_id", "string", 1, None),
        },
    ),
    "dev.orchestra.ModelPriceUnknown": (
        1,
        {
            1: ("model", "string", 1, None),
            2: ("provider", "string", 1, None),
            3: ("node_id", "string", 1, None),
            4: ("message", "string", 1, None),
        },
    ),
}

PINNED_ENUMS = {
    "dev.orchestra.StageStatus": {"success": 0, "partial_success": 1, "retry": 2, "fail": 3, "skipped": 4},
    "dev.orchestra.LifecycleEvent": {
        "started": 0,
        "completed": 1,
        "failed": 2,
        "resumed": 3,
        "interrupted": 4,
        "cancelled": 5,
        "budget_exceeded": 6,
    },
    "dev.orchestra.NodeEvent": {
        "started": 0,
        "completed": 1,
        "failed": 2,
        "retrying": 3,
        "skipped": 4,
        "interrupted": 5,
    },
    "dev.orchestra.InteractionMode": {"gate": 0, "interactive": 1},
    "dev.orchestra.ParallelEvent": {"fan_out": 0, "branch_started": 1, "branch_completed": 2, "fan_in": 3},
}

PINNED_STATUS_CODES = {
    "new": 0, "running": 1, "success": 2, "fail": 3, "interrupted": 4, "cancelled": 5, "budget_exceeded": 6,
}


def _current_types() -> dict:
    current = {}
    for spec in (*NESTED_TYPES, *TURN_TYPES):
        fields = {}
        for f in spec.fields:
            extra = f.enum.enum_id if f.enum else (f.ref.type_id if f.ref else f.items)
            fields[f.tag] = (f.name, f.kind, f.since, extra)
        current[spec.type_id] = (spec.version, fields)
    return current


def test_field_tags_are_pinned() -> None:
    assert _current_types() == PINNED_TYPES


def test_enum_numbers_are_pinned() -> None:
    current = {e.enum_id: {m.value: n for m, n in e.numbers.items()} for e in ENUMS}
    assert current == PINNED_ENUMS


def test_session_status_codes_and_reserved_tags_are_pinned() -> None:
    assert {status.value: code for status, code in STATUS_CODES.items()} == PINNED_STATUS_CODES
    assert (CONTEXT_METADATA_TAG, SESSION_CURSOR_TAG) == (30, 31)


def test_retired_type_ids_are_never_reused() -> None:
    # WorkspaceSnapshotRecorded was retired in #11 before anything produced it and came back in #13 with
    # its v1 tags (node_id, snapshot) as they were published.
    assert RETIRED_TYPE_IDS == ()
    assert not set(RETIRED_TYPE_IDS) & set(_current_types())
