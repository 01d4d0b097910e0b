"""Text views of sessions for `status` and `attach`: the session table, one session's report, one line per turn."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from orchestra_cli.output import count_noun, print_table
from orchestra_core.model.values import format_duration

if TYPE_CHECKING:
    from orchestra_core.model.money import CostTally
    from orchestra_core.model.turn import TokenUsage, ToolCall
    from orchestra_core.session.listing import SessionRow
    from orchestra_core.session.pages import SessionPage
    from orchestra_core.session.summary import SessionSummary
    from orchestra_core.session.timeline import NodeRun
    from orchestra_core.session.turn_view import TurnView

STATUS_STYLES = {
    "success": "green", "partial_success": "green", "fail": "bold red", "interrupted": "yellow",
    "running": "cyan", "retrying": "cyan", "skipped": "dim", "new": "dim", "budget_exceeded": "yellow",
}
SHOWN_CHECKPOINTS = 10
SHOWN_AGENT_TURNS = 50
SHOWN_NODE_RUNS = 50


def local_time(moment: datetime | None, *, with_date: bool = True) -> str:
    """A stored UTC time in the local time zone, to the second."""
    if moment is None:
        return ""
    return moment.astimezone().strftime("%Y-%m-%d %H:%M:%S" if with_date else "%H:%M:%S")


def token_text(usage: TokenUsage | None) -> str:
    """`1,204+61` (prompt + completion tokens); empty when there were none."""
    if usage is None or not usage.total_tokens:
        return ""
    return f"{usage.prompt_tokens:,}+{usage.completion_tokens:,}"


def cost_text(cost: CostTally | None) -> str:
    """`$0.0312`, `$1.20 + unknown (2 turns)`, `unknown (3 turns)`; empty when nothing was paid (or not known)."""
    if cost is None or (cost.complete and not cost.known):
        return ""
    return cost.text()


def first_line(text: str | None, width: int = 60) -> str:
    """The first line of a text, cut to `width` characters."""
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return line if len(line) <= width else line[: width - 3] + "..."


# The session table ---------------------------------------------------------------------------------
def print_session_rows(rows: Sequence[SessionRow], *, location: str, limit: int) -> None:
    """The `orchestra status` table, most recent first."""
    if not rows:
        print(f"no sessions yet in {location}")
        return
    print_table(
        ["session", "pipeline", "status", "started", "duration", "nodes", "cost", "origin"],
        [
            [
                row.info.session_id, row.info.metadata.pipeline, row.status, local_time(row.info.created_at),
                format_duration(row.duration_s, "readable") or _running_for(row), "" if row.nodes_run is None else str(row.nodes_run),
                cost_text(row.cost),
                _origin(row),
            ]
            for row in rows
        ],
        first_cell_styles=[STATUS_STYLES.get(row.status) for row in rows],
    )
    if len(rows) == limit:
        print(f"(the {limit} most recently active; --limit N for more)")


def _running_for(row: SessionRow) -> str:
    if row.status != "running" or row.info.created_at is None:
        return ""
    return f"running {format_duration((datetime.now(UTC) - row.info.created_at).total_seconds(), 'readable')}"


def _origin(row: SessionRow) -> str:
    metadata = row.info.metadata
    if metadata.parent_session_id is None:
        return ""
    if row.branch is not None:
        return f"branch {row.branch} of {metadata.parent_session_id}"
    return f"{metadata.spawn_reason or 'fork'} of {metadata.parent_session_id}"


# One session -----------------------------------------------------------------------------------------
def print_session_summary(
    summary: SessionSummary, *, all_turns: bool = False, shown_turns: int = SHOWN_AGENT_TURNS
) -> None:
    """`orchestra status SESSION`: header, node timeline, agent turns (the last `shown_turns` unless `all_turns`),
    repos, checkpoints."""
    _print_header(summary)
    branches = any(run.branch for run in summary.nodes)
    totals = summary.totals
    if summary.nodes:
        print()
        _print_nodes(summary.nodes, branches, totals.node_runs, summary.info.session_id)
    if summary.agent_turns:
        print()
        shown = len(summary.agent_turns) if all_turns else shown_turns
        _print_agent_turns(summary.agent_turns, branches, summary.info.session_id, shown, totals.agent_turns)
    if summary.repos:
        print()
        print_table(
            ["repo", "branch", "base", "head", "pushed"],
            [
                [repo.name, repo.branch, (repo.base_sha or "")[:12], repo.head_sha[:12], (repo.pushed_sha or "-")[:12]]
                for repo in summary.repos
            ],
            title="repos",
        )
    _print_cost_notices(summary.turns)
    _print_rollbacks(summary.turns)
    _print_saved_work(summary.turns)
    _print_cleanups(summary.turns)
    _print_notification_failures(summary.turns)
    if summary.checkpoints:
        print()
        _print_checkpoints(summary)
    if summary.snapshots:
        print()
        _print_snapshots(summary)


def _print_cost_notices(turns: Sequence[TurnView]) -> None:
    """One line per budget warning and per model without a price the session recorded."""
    from orchestra_core.model.records import BudgetWarning, ModelPriceUnknown

    for turn in turns:
        if isinstance(turn.record, BudgetWarning | ModelPriceUnknown):
            print(f"warning: {turn.record.message}")


def _print_rollbacks(turns: Sequence[TurnView]) -> None:
    """One line per repo a failed run was rolled back in (`--rollback-on-failure`)."""
    from orchestra_core.model.workspace_events import SessionRolledBack

    for turn in turns:
        if isinstance(turn.record, SessionRolledBack):
            event = turn.record
            kept = f" kept as {event.abandoned_ref}" if event.abandoned_ref else ""
            print(f"rolled back: {event.repo} {event.branch} at {event.head_sha[:12]}{kept}")


def _print_saved_work(turns: Sequence[TurnView]) -> None:
    """One line per worktree whose uncommitted changes were saved before a reset (resume, rollback, ...)."""
    from orchestra_core.model.workspace_events import UncommittedWorkSaved

    for turn in turns:
        if isinstance(turn.record, UncommittedWorkSaved):
            event = turn.record
            files = ", ".join(event.paths[:5]) + (f" and {len(event.paths) - 5} more" if len(event.paths) > 5 else "")
            print(f"saved: {event.repo} uncommitted changes ({files}) before {event.reason} as {event.abandoned_ref}")


def _print_cleanups(turns: Sequence[TurnView]) -> None:
    """One line per branch `orchestra cleanup` removed (its worktree with it)."""
    from orchestra_core.model.workspace_events import SessionCleanedUp

    for turn in turns:
        if isinstance(turn.record, SessionCleanedUp):
            event = turn.record
            kept = f", kept as {event.abandoned_ref}" if event.abandoned_ref else ""
            print(f"cleaned up: {event.repo} {event.branch} at {event.head_sha[:12]} ({event.reason}{kept})")


def _print_notification_failures(turns: Sequence[TurnView]) -> None:
    """One line per notification a target could not take (`notify:` in orchestra.yaml), after its retries."""
    from orchestra_core.model.records import NotificationFailed

    for turn in turns:
        if isinstance(turn.record, NotificationFailed):
            print(f"notify: {turn.record.text()}")


def _print_header(summary: SessionSummary) -> None:
    info = summary.info
    metadata = info.metadata
    title = f" ({metadata.title})" if metadata.title and metadata.title != metadata.pipeline else ""
    lines = [f"session {info.session_id}: {metadata.pipeline}{title}", f"status   {_status_line(summary)}"]
    lines.append(f"started  {local_time(info.created_at)}")
    if metadata.parent_session_id:
        fork = f", forked at turn {summary.fork_turn_id}" if summary.fork_turn_id else ""
        lines.append(f"origin   {metadata.spawn_reason or 'fork'} of session {metadata.parent_session_id}{fork}")
    totals = summary.totals
    agent_turns = totals.agent_turns
    if agent_turns:
        tokens = token_text(totals.tokens) or "no"
        lines.append(f"agents   {count_noun(agent_turns, 'agent turn')}, {tokens} tokens (prompt+completion)")
        lines.append(f"cost     {cost_text(totals.cost) or '$0.00'}")
    if summary.branches:
        shown = ", ".join(f"{b.branch} = session {b.session_id}" for b in summary.branches)
        lines.append(f"branches {shown}")
    if summary.error:
        lines.append(f"error    {summary.error}")
    print("\n".join(lines))


def _status_line(summary: SessionSummary) -> str:
    info = summary.info
    status = info.status.value
    if status in ("new", "running"):
        return status
    ended = summary.ending.at if summary.ending else info.updated_at
    took = summary.ending.duration_s if summary.ending else None
    return f"{status}, ended {local_time(ended)}" + (f" after {format_duration(took, 'readable')}" if took is not None else "")


def _print_nodes(runs: Sequence[NodeRun], branches: bool, total: int, session_id: str) -> None:
    headers = ["#", "node", "handler", "status", "attempts", "duration", "agent turns", "tokens", "cost"]
    hidden = max(0, total - len(runs))
    rows = []
    for index, run in enumerate(runs, hidden + 1):
        row = [
            str(index), run.node_id, run.handler_type, run.status, str(run.attempts), _run_time(run),
            str(run.agent_turns) if run.agent_turns else "", token_text(run.tokens), cost_text(run.cost),
        ]
        rows.append([*row, run.branch or ""] if branches else row)
    title = f"nodes, the last {len(runs)} of {total}" if hidden else "nodes"
    print_table([*headers, "branch"] if branches else headers, rows, title=title)
    if hidden:
        print(f"({count_noun(hidden, 'earlier node run')} not shown; orchestra status {session_id} --all shows every one)")
    for run in runs:
        if run.failure_reason:
            print(f"  {run.node_id}: {first_line(run.failure_reason, 200)}")


def _run_time(run: NodeRun) -> str:
    """The run's time; for a node still running, how long so far."""
    if run.duration_s is not None or run.status not in ("running", "retrying") or run.started_at is None:
        return format_duration(run.duration_s, "readable")
    return f"{format_duration((datetime.now(UTC) - run.started_at).total_seconds(), 'readable')} so far"


def _print_agent_turns(turns: Sequence[TurnView], branches: bool, session_id: str, shown: int, total: int) -> None:
    from orchestra_core.model.turn import AgentTurn

    turns = turns[-shown:] if shown > 0 else []
    hidden = max(0, total - len(turns))
    headers = ["turn", "node", "#", "model", "tools", "files written", "commit", "tokens", "cost", "time"]
    rows = []
    for turn in turns:
        record = turn.record
        assert isinstance(record, AgentTurn)
        commits = turn.commits
        commit = f"{commits[0].sha[:8]} {first_line(commits[0].message, 50)}" if commits else ""
        if len(commits) > 1:
            commit += f" (+{len(commits) - 1} repos)"
        model = f"{record.model} (for {record.requested_model})" if record.requested_model else record.model
        row = [
            turn.turn_id, record.node_id, str(record.turn_number), model,
            tool_names(record.tool_calls), ", ".join(record.files_written), commit,
            token_text(record.token_usage), _turn_cost_text(record), format_duration(record.duration_s, "readable"),
        ]
        rows.append([*row, turn.branch or ""] if branches else row)
    title = "agent turns (orchestra resume SESSION --turn TURN, or replay SESSION --turn TURN)"
    if hidden:
        title += f", the last {len(turns)} of {hidden + len(turns)}"
    print_table([*headers, "branch"] if branches else headers, rows, title=title)
    if hidden:
        print(f"({count_noun(hidden, 'earlier agent turn')} not shown; orchestra status {session_id} --all shows every one)")


def _turn_cost_text(record: object) -> str:
    from orchestra_core.model.money import format_usd
    from orchestra_core.model.turn import AgentTurn
    from orchestra_core.session.turn_view import turn_cost

    assert isinstance(record, AgentTurn)
    cost = turn_cost(record)
    return "unknown" if cost is None else (format_usd(cost) if cost or record.token_usage.total_tokens else "")


def _print_checkpoints(summary: SessionSummary) -> None:
    shown = summary.checkpoints[-SHOWN_CHECKPOINTS:]
    total = summary.totals.checkpoints
    title = f"checkpoints (orchestra replay {summary.info.session_id} --checkpoint TURN)"
    if len(shown) < total:
        title += f", the last {len(shown)} of {total} (--json lists all)"
    print_table(
        ["turn", "after", "at"],
        [[t.turn_id, t.node_id or "(before start)", local_time(t.created_at)] for t in shown],
        title=title,
    )


def _print_snapshots(summary: SessionSummary) -> None:
    rows = summary.snapshots
    shown = rows[-SHOWN_CHECKPOINTS:]
    title = "workspace snapshots (each repo's head where a checkpoint found one moved; resume restores these)"
    if len(shown) < len(rows):
        title += f", the last {len(shown)} of {len(rows)} (--json lists all)"
    elif summary.counts is not None and summary.totals.checkpoints > len(summary.checkpoints):
        title += ", the latest (--json lists all)"
    repos = sorted({name for row in rows for name in row.heads})
    print_table(
        ["checkpoint", "after", *repos],
        [
            [row.checkpoint_turn_id, row.node_id or "(before start)", *(row.heads.get(n, "")[:12] for n in repos)]
            for row in shown
        ],
        title=title,
    )


# One line per turn (attach) --------------------------------------------------------------------------
def print_session_page(page: SessionPage) -> None:
    """`orchestra status SESSION --after TURN`: the header, then the page's turns as `attach` prints them, and how
    to get the next page."""
    summary = page.summary
    _print_header(summary)
    print()
    start = f"after turn {page.after}" if page.after else "from the start"
    print(f"turns {start}, at most {page.limit}:")
    for view in summary.turns:
        line = turn_line(view)
        if line is not None:
            print(line)
    if page.next_after is not None:
        session = summary.info.session_id
        print(f"(more turns follow: orchestra status {session} --after {page.next_after} --limit {page.limit})")
    else:
        print("(no more turns)")


def turn_line(view: TurnView) -> str | None:
    """One line for a turn as it lands: `HH:MM:SS  [branch] text`.

    None for turns another line already tells (a commit is shown with its agent turn, a worktree with
    its session branch).
    """
    from orchestra_cli.runtime.progress_feed import merged_text, untracked_text
    from orchestra_core.model import records as r
    from orchestra_core.model import workspace_events as w
    from orchestra_core.model.failover import ModelFailover
    from orchestra_core.model.turn import AgentTurn

    record = view.record
    describe = {
        r.PipelineLifecycle: _lifecycle_text,
        r.NodeExecution: _node_text,
        AgentTurn: lambda _record: _agent_text(view),
        r.CheckpointRecord: lambda _record: _checkpoint_text(view),
        r.HumanInteraction: _human_text,
        r.ParallelExecution: _parallel_text,
        w.SessionBranchCreated: lambda b: f"branch {b.branch} in {b.repo} from {b.base_sha[:8]}",
        w.WorktreeMerged: merged_text,
        w.WorktreeMergeConflict: lambda c: (
            f"merge conflict: {c.branch} into {c.into_branch} in {c.repo}: {', '.join(c.conflicting_files)}"
        ),
        w.UntrackedWritesCommitted: lambda u: f"warning: {untracked_text(u)}",
        ModelFailover: lambda f: f"! {f.node_id or 'commit message'}: model failover: {f.describe()}",
        r.NotificationFailed: lambda n: f"notify: {n.text()}",
        r.BudgetWarning: lambda b: f"warning: {b.message}",
        r.ModelPriceUnknown: lambda p: f"warning: {p.message}",
        w.WorkspaceSnapshotRecorded: lambda s: "snapshot after " + (s.node_id or "start") + ": " + ", ".join(
            f"{repo} {sha[:8]}" for repo, sha in sorted(s.heads.items())
        ),
    }.get(type(record))
    if describe is None:
        if record is not None:
            return None
        text = f"{view.type_id} turn {view.turn_id}"
    else:
        text = describe(record)
    prefix = f"[{view.branch}] " if view.branch else ""
    return f"{local_time(view.created_at, with_date=False)}  {prefix}{text}"


def _lifecycle_text(record: object) -> str:
    from orchestra_core.model.records import LifecycleEvent, PipelineLifecycle

    assert isinstance(record, PipelineLifecycle)
    took = f" after {format_duration(record.duration_s, 'readable')}" if record.duration_s is not None else ""
    error = f": {first_line(record.error, 200)}" if record.error else ""
    return {
        LifecycleEvent.STARTED: f"pipeline {record.pipeline_name} started",
        LifecycleEvent.RESUMED: f"pipeline {record.pipeline_name} resumed",
        LifecycleEvent.COMPLETED: f"pipeline succeeded{took}",
        LifecycleEvent.FAILED: f"pipeline FAILED{took}{error}",
        LifecycleEvent.INTERRUPTED: f"pipeline interrupted{error}",
        LifecycleEvent.CANCELLED: f"pipeline cancelled{error}",
        LifecycleEvent.BUDGET_EXCEEDED: f"pipeline stopped by its budget{error}",
    }[record.event]


def _node_text(record: object) -> str:
    from orchestra_core.model.records import NodeEvent, NodeExecution

    assert isinstance(record, NodeExecution)
    node, took = record.node_id, format_duration(record.duration_s, "readable")
    status = record.outcome.status.value if record.outcome else record.event.value
    if record.event is NodeEvent.STARTED:
        return f"> {node} ({record.handler_type})"
    if record.event is NodeEvent.RETRYING:
        return f"~ {node} retrying (attempt {record.attempt})"
    if record.event is NodeEvent.SKIPPED:
        return f"- {node} skipped"
    if record.event is NodeEvent.INTERRUPTED:
        return f"! {node} interrupted (attempt {record.attempt}): the run stopped while it ran; it runs again"
    if record.event is NodeEvent.FAILED:
        reason = record.outcome.failure_reason if record.outcome else ""
        return f"x {node} failed (attempt {record.attempt}) in {took}: {first_line(reason, 200)}"
    extra = [f"after {record.attempt} attempts"] if record.attempt > 1 else []
    if record.agent_turn_count:
        extra.append(count_noun(record.agent_turn_count, "agent turn"))
    if token_text(record.total_token_usage):
        extra.append(f"{token_text(record.total_token_usage)} tokens")
    return f"ok {node} {status} in {took}" + (f" ({', '.join(extra)})" if extra else "")


def tool_names(calls: Sequence[ToolCall]) -> str:
    """`project:write-file, Shell (denied)`: a turn's tool calls, those Orchestra's permission policy refused marked."""
    return ", ".join(f"{call.name} (denied)" if call.denied else call.name for call in calls)


def _agent_text(view: TurnView) -> str:
    from orchestra_core.model.turn import AgentTurn

    record = view.record
    assert isinstance(record, AgentTurn)
    tools = tool_names(record.tool_calls) or "no tools"
    line = f". {record.node_id} turn {record.turn_number} ({record.model}): {tools}"
    for commit in view.commits:
        repo = f"{commit.repo} " if commit.repo else ""
        line += f"; {repo}{commit.sha[:8]} {first_line(commit.message)}"
    tokens = token_text(record.token_usage)
    return line + (f" [{tokens} tokens, {format_duration(record.duration_s, 'readable')}]" if tokens else "")


def _checkpoint_text(view: TurnView) -> str:
    where = f"after {view.node_id}" if view.node_id else "before start"
    return f"checkpoint {view.turn_id} {where}"


def _human_text(record: object) -> str:
    from orchestra_core.model.records import HumanInteraction

    assert isinstance(record, HumanInteraction)
    answer = record.selected_option or record.answer or "(no answer)"
    return f"? {record.node_id}: {first_line(record.question)} -> {answer}"


def _parallel_text(record: object) -> str:
    from orchestra_core.model.records import ParallelEvent, ParallelExecution

    assert isinstance(record, ParallelExecution)
    node = record.node_id
    if record.event is ParallelEvent.FAN_OUT:
        count = record.branch_count or 0
        return f"|| {node}: {count} branch{'' if count == 1 else 'es'}, {record.join_policy or 'wait_all'}"
    if record.event is ParallelEvent.BRANCH_STARTED:
        return f"|| {node}: branch {record.branch_id} started (session {record.branch_session_id})"
    if record.event is ParallelEvent.BRANCH_COMPLETED:
        status = record.status.value if record.status else "done"
        return f"|| {node}: branch {record.branch_id} {status}"
    sessions = f" (sessions {', '.join(record.branch_session_ids)})" if record.branch_session_ids else ""
    return f"|| {node}: {record.success_count or 0} succeeded, {record.failure_count or 0} failed{sessions}"
