"""What `attach` prints for each kind of turn, and the human-readable durations and token counts."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from orchestra_cli.session_views import token_text, turn_line
from orchestra_core.model import records as r
from orchestra_core.model import workspace_events as w
from orchestra_core.model.outcome import Outcome, StageStatus
from orchestra_core.model.turn import AgentTurn, TokenUsage, ToolCall, TurnCommit
from orchestra_core.model.values import format_duration
from orchestra_core.ports.session_store import StoredTurn
from orchestra_core.session.codec import encode_record
from orchestra_core.session.turn_view import TurnView

AT = datetime(2026, 3, 12, 10, 15, 1, tzinfo=UTC)
SHA = "07a1ef35b04c52af7dc0eab971b4695feca1a69d"


def line(record: object, branch: str | None = None, turn_id: str = "9") -> str | None:
    encoded = encode_record(record)
    stored = StoredTurn(turn_id, None, 0, encoded.type_id, encoded.type_version, encoded.data, AT)
    return turn_line(TurnView.of(stored, "1", branch))


@pytest.mark.parametrize(
    ("record", "text"),
    [
        (r.PipelineLifecycle(r.LifecycleEvent.STARTED, "ship"), "pipeline ship started"),
        (r.PipelineLifecycle(r.LifecycleEvent.RESUMED, "ship"), "pipeline ship resumed"),
        (r.PipelineLifecycle(r.LifecycleEvent.COMPLETED, "ship", duration_s=83.0), "pipeline succeeded after 1m 23s"),
        (
            r.PipelineLifecycle(r.LifecycleEvent.FAILED, "ship", duration_s=2.5, error="stage x failed\nmore"),
            "pipeline FAILED after 2.5s: stage x failed",
        ),
        (r.PipelineLifecycle(r.LifecycleEvent.INTERRUPTED, "ship", error="interrupted"), "pipeline interrupted: interrupted"),
        (r.NodeExecution("plan", r.NodeEvent.STARTED, "codergen"), "> plan (codergen)"),
        (
            r.NotificationFailed("webhook https://hooks.example.com/services/…", "needs_input", 3, "HTTP 500"),
            "notify: webhook https://hooks.example.com/services/… failed 3 times: HTTP 500 (needs_input)",
        ),
        (r.NodeExecution("plan", r.NodeEvent.RETRYING, "codergen", attempt=2), "~ plan retrying (attempt 2)"),
        (r.NodeExecution("plan", r.NodeEvent.SKIPPED, "codergen"), "- plan skipped"),
        (
            r.NodeExecution("t", r.NodeEvent.FAILED, "tool", outcome=Outcome.fail("exit code 3"), duration_s=0.4),
            "x t failed (attempt 1) in 400ms: exit code 3",
        ),
        (
            r.NodeExecution(
                "plan", r.NodeEvent.COMPLETED, "codergen", attempt=2, outcome=Outcome.success(), duration_s=3.25,
                total_token_usage=TokenUsage(1204, 61), agent_turn_count=2,
            ),
            "ok plan success in 3.2s (after 2 attempts, 2 agent turns, 1,204+61 tokens)",
        ),
        (
            AgentTurn(
                "impl", 0, "m", "p", tool_calls=(ToolCall("project:write-file"),), token_usage=TokenUsage(10, 2),
                duration_s=0.012, commits=(TurnCommit("project", SHA, "Add hello.py\n\nBody."),),
            ),
            f". impl turn 0 (m): project:write-file; project {SHA[:8]} Add hello.py [10+2 tokens, 12ms]",
        ),
        (AgentTurn("impl", 1, "m", "p", commits=(TurnCommit("", SHA, "Fix"),)), f". impl turn 1 (m): no tools; {SHA[:8]} Fix"),
        (r.CheckpointRecord("plan"), "checkpoint 9 after plan"),
        (r.CheckpointRecord(""), "checkpoint 9 before start"),
        (
            r.HumanInteraction("gate", r.InteractionMode.GATE, "Ship it?", ("[A] Approve",), selected_option="[A] Approve"),
            "? gate: Ship it? -> [A] Approve",
        ),
        (r.ParallelExecution("fan", r.ParallelEvent.FAN_OUT, branch_count=2, join_policy="wait_all"), "|| fan: 2 branches, wait_all"),
        (
            r.ParallelExecution("fan", r.ParallelEvent.BRANCH_STARTED, branch_id="a", branch_session_id="4"),
            "|| fan: branch a started (session 4)",
        ),
        (
            r.ParallelExecution("fan", r.ParallelEvent.BRANCH_COMPLETED, branch_id="a", status=StageStatus.FAIL),
            "|| fan: branch a fail",
        ),
        (
            r.ParallelExecution("fan", r.ParallelEvent.FAN_IN, success_count=1, failure_count=1, branch_session_ids=("4", "5")),
            "|| fan: 1 succeeded, 1 failed (sessions 4, 5)",
        ),
        (w.SessionBranchCreated(repo="api", branch="orchestra/p/1", base_sha=SHA), f"branch orchestra/p/1 in api from {SHA[:8]}"),
        (w.WorktreeMerged(repo="api", branch="b", into_branch="main", merge_sha=SHA), f"merged b into main in api ({SHA[:8]})"),
        (
            w.WorktreeMergeConflict(repo="api", branch="b", into_branch="main", conflicting_files=("x.py", "y.py")),
            "merge conflict: b into main in api: x.py, y.py",
        ),
    ],
)
def test_each_turn_is_one_line(record: object, text: str) -> None:
    assert line(record) == f"{AT.astimezone():%H:%M:%S}  {text}"


def test_branch_turns_are_prefixed_and_told_turns_are_left_out() -> None:
    assert line(r.NodeExecution("l", r.NodeEvent.STARTED, "codergen"), branch="fan:l").endswith("  [fan:l] > l (codergen)")
    assert line(w.AgentCommitCreated(repo="api", sha=SHA, branch="b", node_id="impl", turn_number=0, message="Add")) is None
    assert line(w.WorktreeCreated(repo="api", path="/w", branch="b", base_sha=SHA)) is None
    foreign = StoredTurn("3", None, 0, "com.example.Note", 1, {1: "x"}, AT)
    assert turn_line(TurnView.of(foreign, "1")).endswith("  com.example.Note turn 3")  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(None, ""), (0.0004, "0ms"), (0.84, "840ms"), (4.25, "4.2s"), (59.9, "59.9s"), (185, "3m 05s"), (7260, "2h 01m")],
)
def test_durations_read_naturally(seconds: float | None, text: str) -> None:
    assert format_duration(seconds, "readable") == text


def test_token_counts() -> None:
    assert (token_text(None), token_text(TokenUsage()), token_text(TokenUsage(12345, 6))) == ("", "", "12,345+6")
