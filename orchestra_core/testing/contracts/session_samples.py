"""One filled-in record of every dev.orchestra turn type, for round-trip tests of stores and codecs."""

from __future__ import annotations

from orchestra_core.model import records as r
from orchestra_core.model import workspace_events as w
from orchestra_core.model.outcome import Outcome, StageStatus
from orchestra_core.model.turn import AgentTurn, TokenUsage, ToolCall, TurnCommit

SNAPSHOT = r.WorkspaceSnapshot(
    (
        r.RepoSnapshot("backend", "e4f5a6b7", "orchestra/pr-review/7", base_sha="0a1b2c"),
        r.RepoSnapshot("frontend", "111aaabbb", "orchestra/pr-review/7"),
    ),
    node_id="critic",
)

CORE_AGENT_TURN = AgentTurn(
    node_id="security_reviewer",
    turn_number=2,
    model="claude-sonnet-4-20250514",
    provider="anthropic",
    messages=({"role": "assistant", "content": "I'll add validation…"}, {"role": "tool", "content": "ok"}),
    tool_calls=(
        ToolCall("backend:read-file", {"path": "app/x.rb"}, call_id="c1", result="text"),
        ToolCall(
            "backend:write-file", {"path": "spec/x_spec.rb", "content": "…"}, call_id="c2", error="denied"
        ),
    ),
    files_written=("backend:app/x.rb", "frontend:src/y.ts"),
    token_usage=TokenUsage(4200, 1800),
    agent_state_ref="langgraph_checkpoint_abc123",
    duration_s=3.25,
    commits=(
        TurnCommit("backend", "e4f5a6b7", "Add validation", "orchestra/pr-review/7"),
        TurnCommit("frontend", "99887766", "Show errors", "orchestra/pr-review/7"),
    ),
)

RECORDS: tuple[object, ...] = (
    r.PipelineLifecycle(
        r.LifecycleEvent.COMPLETED,
        "pr-review",
        goal="Review PR 42",
        status=StageStatus.SUCCESS,
        duration_s=12.5,
        dot_path="pipelines/pr-review.dot",
        dot_blob="7d911c8b58f0ac3a109a19007f8dea0f023d55ce8698b947828cb79b3ba0b7b6",
        logs_root=".orchestra/runs/7",
    ),
    r.PipelineLifecycle(r.LifecycleEvent.FAILED, "pr-review", error="goal gate unsatisfied"),
    r.NodeExecution(
        "plan",
        r.NodeEvent.COMPLETED,
        handler_type="codergen",
        attempt=2,
        outcome=Outcome(
            StageStatus.PARTIAL_SUCCESS,
            preferred_label="Yes",
            suggested_next_ids=("review",),
            context_updates={"plan.ready": True, "count": 3, "nested": {"a": [1, 2.5, None]}},
            notes="done",
            failure_reason="",
        ),
        duration_s=4.0,
        total_token_usage=TokenUsage(10, 20),
        agent_turn_count=3,
    ),
    CORE_AGENT_TURN,
    r.CheckpointRecord(
        "critic",
        completed_nodes=("start", "plan", "critic"),
        context_snapshot={"goal": "x", "graph.goal": "x", "n": 1, "f": 0.5, "list": ["a", 1]},
        retry_counters={"plan": 1},
        agent_turn_number=3,
        node_outcomes={"plan": Outcome.success("planned"), "critic": Outcome.fail("too vague")},
        logs=("started", "plan ok"),
        next_node="fix",
        run_status="running",
        failure_reason="",
        node_visits=4,
        loop_restarts=1,
        workspace_snapshot=SNAPSHOT,
    ),
    r.HumanInteraction(
        "approve",
        r.InteractionMode.GATE,
        "Ship it?",
        options=("Yes", "No"),
        answer="Yes",
        selected_option="Y",
        interviewer="queue",
    ),
    r.ParallelExecution(
        "fan_in",
        r.ParallelEvent.FAN_IN,
        branch_count=2,
        join_policy="wait_all",
        success_count=1,
        failure_count=1,
        status=StageStatus.PARTIAL_SUCCESS,
        branch_session_ids=("8", "9"),
    ),
    SNAPSHOT,
    w.SessionBranchCreated(
        repo="backend", branch="orchestra/pr-review/7", base_sha="0a1b2c", base_ref="main"
    ),
    w.AgentCommitCreated(
        repo="backend",
        sha="e4f5a6b7",
        branch="orchestra/pr-review/7",
        node_id="plan",
        turn_number=2,
        message="Add x",
        files=("app/x.rb",),
    ),
    w.WorktreeCreated(
        repo="backend",
        path="/w/.orchestra/worktrees/7/a",
        branch="orchestra/pr-review/7/a",
        base_sha="0a1b2c",
        node_id="a",
    ),
    w.WorktreeMerged(
        repo="backend",
        branch="orchestra/pr-review/7/a",
        into_branch="orchestra/pr-review/7",
        merge_sha="fedcba",
        node_id="fan_in",
        conflicting_files=("api.py",),
    ),
    w.WorktreeMergeConflict(
        repo="backend",
        branch="orchestra/pr-review/7/b",
        into_branch="orchestra/pr-review/7",
        conflicting_files=("app/x.rb",),
        node_id="fan_in",
        detail="both",
    ),
    w.UntrackedWritesCommitted(
        repo="backend",
        node_id="implement",
        turn_number=4,
        paths=("app/generated.rb", "notes.txt"),
        sha="a1b2c3d4",
        branch="orchestra/pr-review/7",
    ),
    w.RepoCloned(repo="backend", url="https://bob:s3cret@git.example/b.git", path="/w/backend", depth=1),
    w.RepoFetched(repo="backend", url="file:///srv/git/backend.git"),
    w.RemotePushed(repo="backend", branch="orchestra/pr-review/7", sha="a1b2c3d4", remote_url="ssh://git@h/b.git"),
    w.PushFailed(
        repo="backend", branch="orchestra/pr-review/7", sha="a1b2c3d4", reason="rejected by hook", category="rejected"
    ),
    w.SessionRolledBack(
        repo="backend", branch="orchestra/pr-review/7", head_sha="a1b2c3d4", base_sha="0f0f0f0f",
        abandoned_ref="refs/orchestra/abandoned/7/1",
    ),
    w.SessionCleanedUp(
        repo="backend", branch="orchestra/pr-review/7", head_sha="a1b2c3d4", worktree_path="/w/.orchestra/worktrees/7/backend",
        reason="forced", abandoned_ref="refs/orchestra/abandoned/7/2",
    ),
    w.UncommittedWorkSaved(
        repo="backend", worktree_path="/w/.orchestra/worktrees/7/backend", branch="orchestra/pr-review/7",
        sha="b2c3d4e5", abandoned_ref="refs/orchestra/abandoned/7/3", reason="resume", paths=("notes.txt", "app/x.rb"),
        left_out=(".gitattributes",),
    ),
    r.NotificationFailed(
        target="webhook https://hooks.example.com/services/…", event="finished", attempts=3, reason="HTTP 500"
    ),
    AgentTurn(
        node_id="implement",
        turn_number=4,
        model="sonnet",
        provider="claude-code",
        files_written=("backend:app/generated.rb", "backend:notes.txt"),
        commits=(TurnCommit("backend", "a1b2c3d4", "Add generated files", "orchestra/pr-review/7"),),
        untracked=True,
    ),
)
