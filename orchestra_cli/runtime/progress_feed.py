"""What `orchestra run` shows while a run goes: engine events to the progress view, agent turns and
workspace events as notes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from orchestra_core.model.events import AgentTurnCompleted, EngineEvent

if TYPE_CHECKING:
    from orchestra_core.model.turn import AgentTurn
    from orchestra_core.model.workspace_events import (
        UncommittedWorkSaved,
        UntrackedWritesCommitted,
        WorkspaceRestored,
        WorktreeMerged,
    )


class ProgressFeed:
    """The run's `on_event` subscriber for the CLI's progress observers (plain lines or the rich view)."""

    def __init__(self, observers: Sequence[Any]) -> None:
        self._observers = tuple(observers)

    def __call__(self, event: Any) -> None:
        if isinstance(event, AgentTurnCompleted):
            self.note(describe_turn(event.turn))
            for observer in self._observers:
                agent_turn = getattr(observer, "agent_turn", None)
                if agent_turn is not None:  # the heartbeat's "waiting for agent turn N"
                    agent_turn(event.turn.node_id, event.turn.turn_number, event.branch)
        elif isinstance(event, EngineEvent):
            for observer in self._observers:
                observer.on_event(event)
        else:
            self._workspace_note(event)

    def _workspace_note(self, event: Any) -> None:
        """A workspace event as a note (imported here: a run without workspace repos sends none)."""
        from orchestra_core.model.workspace_events import (
            CommitModelFailedOver,
            PushFailed,
            RemotePushed,
            RepoCloned,
            SessionBranchCreated,
            UncommittedWorkSaved,
            UntrackedWritesCommitted,
            WorkspaceEvent,
            WorkspaceRestored,
            WorktreeCreated,
            WorktreeMergeConflict,
            WorktreeMerged,
        )

        if isinstance(event, RepoCloned):
            depth = f", depth {event.depth}" if event.depth else ""
            self.note(f"cloned {event.repo} from {event.url} into {event.path}{depth}")
        elif isinstance(event, RemotePushed):
            self.note(f"pushed {event.branch} of {event.repo} at {event.sha[:8]} to {event.remote_url}")
        elif isinstance(event, PushFailed):
            reason = event.reason.strip().splitlines()[-1] if event.reason.strip() else event.category
            self.note(
                f"warning: push of {event.branch} in {event.repo} failed ({event.category}): {reason}; "
                "the run goes on and the next push retries"
            )
        elif isinstance(event, SessionBranchCreated):
            where = "in place" if event.isolation == "in_place" else f"worktree {event.worktree_path}"
            self.note(f"branch {event.branch} in {event.repo} ({where})")
        elif isinstance(event, WorktreeCreated) and event.node_id:
            self.note(f"worktree {event.path} on {event.branch} in {event.repo} (parallel {event.node_id})")
        elif isinstance(event, WorktreeMerged):
            self.note(merged_text(event))
        elif isinstance(event, WorktreeMergeConflict):
            files = ", ".join(event.conflicting_files)
            self.note(
                f"warning: merge conflict: {event.branch} into {event.into_branch} in {event.repo}: {files}; "
                "the session branch is unchanged and the worktrees are kept, unless the join node routes the "
                "conflict on"
            )
        elif isinstance(event, UntrackedWritesCommitted):
            self.note(f"warning: {untracked_text(event)}")
        elif isinstance(event, UncommittedWorkSaved):
            self.warn(saved_text(event))
        elif isinstance(event, CommitModelFailedOver):
            node = event.failover.node_id or "?"
            self.note(f"! {node}: commit message model failover in {event.repo}: {event.failover.describe()}")
        elif isinstance(event, WorkspaceRestored) and event.abandoned_ref:
            self.note(f"warning: {restored_text(event)}")
        elif isinstance(event, WorkspaceEvent) and event.level == "warning":
            self.note(f"warning: {_event_text(event)}")

    def note(self, line: str) -> None:
        for observer in self._observers:
            note = getattr(observer, "note", None)
            if note is not None:
                note(line)

    def warn(self, line: str) -> None:
        """A `warning: ` note that must reach the user: on stderr when nothing shows progress (`--quiet`)."""
        if any(getattr(observer, "note", None) is not None for observer in self._observers):
            self.note(f"warning: {line}")
        else:
            import typer

            typer.echo(f"warning: {line}", err=True)


def describe_turn(turn: AgentTurn) -> str:
    """A one-line summary of an agent turn for progress output."""
    tools = ", ".join(call.name for call in turn.tool_calls) or "no tools"
    line = f"  . {turn.node_id} turn {turn.turn_number}: {tools}"
    if turn.requested_model:
        line = f"  . {turn.node_id} turn {turn.turn_number} ({turn.provider} {turn.model} for {turn.requested_model}): {tools}"
    if turn.untracked:
        line = f"  . {turn.node_id} turn {turn.turn_number}: untracked changes"
    for commit in turn.commits:
        summary = commit.message.splitlines()[0] if commit.message else ""
        line += f"; {commit.repo} {commit.sha[:8]} {summary}"
    return line


def merged_text(event: WorktreeMerged) -> str:
    """A branch merged at fan-in (with the files it left conflict markers in, when the join routed a conflict on)."""
    line = f"merged {event.branch} into {event.into_branch} in {event.repo} ({event.merge_sha[:8]})"
    if event.conflicting_files:
        line += f" with conflict markers left for resolution in {', '.join(event.conflicting_files)}"
    return line


def untracked_text(event: UntrackedWritesCommitted) -> str:
    """What the safety net committed: the files no tool reported, where, and in which commit."""
    files = ", ".join(event.paths) or "(none)"
    return (
        f"{event.node_id} turn {event.turn_number} changed files in {event.repo} that no tool reported; "
        f"committed apart as {event.sha[:8]} (Orchestra-Untracked: true): {files}"
    )


def restored_text(event: WorkspaceRestored) -> str:
    """A branch moved back (resume, rollback): where to, and the ref that keeps the commits it had."""
    return (
        f"{event.repo}: {event.branch} restored to {event.sha[:8]} ({event.reason}); its head "
        f"{event.previous_sha[:8]} is kept as {event.abandoned_ref}"
    )


def saved_text(event: UncommittedWorkSaved) -> str:
    """Uncommitted work saved before a reset: the repo, the files, the ref, and how to get them back."""
    files = ", ".join(event.paths[:10]) + (f" and {len(event.paths) - 10} more" if len(event.paths) > 10 else "")
    return (
        f"{event.repo}: uncommitted changes in {event.worktree_path} saved before {event.reason} as "
        f"{event.abandoned_ref}: {files}; get them back with `git checkout {event.abandoned_ref} -- FILE` "
        f"or `git cherry-pick {event.abandoned_ref}`"
    )


def _event_text(event: Any) -> str:
    reason = getattr(event, "reason", "")
    return f"{event.kind} in {getattr(event, 'repo', '?')}" + (f": {reason}" if reason else "")
