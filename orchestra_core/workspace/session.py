"""WorkspaceSession: one run's session branches: per-turn commits, repo contexts, snapshots, rollback."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from attrs import evolve

from orchestra_core.agents.repo_context import RepoContext
from orchestra_core.model.settings import RepoSettings
from orchestra_core.model.turn import AgentTurn, TurnCommit
from orchestra_core.model.workspace_events import (
    UncommittedWorkSaved,
    WorkspaceEvent,
    WorkspaceRestored,
    WritesNotCommitted,
)
from orchestra_core.ports.clock import Clock
from orchestra_core.ports.codergen_backend import OnTurn
from orchestra_core.ports.commit_messages import CommitMessageGenerator
from orchestra_core.ports.git import Git, GitError
from orchestra_core.ports.tree_files import TreeFiles
from orchestra_core.workspace.abandoned import keep_abandoned
from orchestra_core.workspace.committer import RepoCommitter
from orchestra_core.workspace.context import IN_PLACE, WorkspaceContext
from orchestra_core.workspace.errors import ProtectedBranchError, WorkspaceCommitError, WorkspaceError
from orchestra_core.workspace.naming import is_protected
from orchestra_core.workspace.tool_stage import ToolStageRun, ToolStageWatch
from orchestra_core.workspace.uncommitted import save_uncommitted
from orchestra_core.workspace.worktree_include import copy_included_files
from orchestra_core.workspace.worktree_watch import WorktreeWatch


class WorkspaceSession:
    """The session branches of one run, one per workspace repo (made by `WorkspaceManager`).

    Thread-safe: parallel nodes may commit at the same time; commits to one repo are serialised by
    the repo's lock, and a branch that moved under a commit is detected, never overwritten.
    """

    def __init__(
        self,
        session_id: str,
        contexts: list[WorkspaceContext],
        settings: Mapping[str, RepoSettings],
        git: Git,
        clock: Clock,
        commit_messages: CommitMessageGenerator | None,
        emit: Callable[[WorkspaceEvent], None],
        tree_files: Mapping[str, TreeFiles] | None = None,
    ) -> None:
        self.session_id = session_id
        self._tree_files = dict(tree_files or {})
        self._contexts = {context.repo_name: context for context in contexts}
        self._settings = dict(settings)
        self._git = git
        self._clock = clock
        self._commit_messages = commit_messages
        self._emit = emit
        self._committer = RepoCommitter(git, clock, commit_messages, emit)
        self._lock = threading.Lock()

    @property
    def contexts(self) -> Mapping[str, WorkspaceContext]:
        """Each repo's context, with the head as of its last commit, rollback or restore here."""
        with self._lock:
            return dict(self._contexts)

    def child(
        self, contexts: list[WorkspaceContext], tree_files: Mapping[str, TreeFiles] | None = None
    ) -> WorkspaceSession:
        """A session over other branches and worktrees of the same repos (a parallel branch's), committing the
        same way; `tree_files`: the repos whose worktrees are lazy (`Git.worktree_add_lazy`)."""
        return WorkspaceSession(
            self.session_id, contexts, self._settings, self._git, self._clock, self._commit_messages, self._emit,
            tree_files,
        )  # fmt: skip

    def lazy_repos(self) -> tuple[str, ...]:
        """The repos whose worktrees here are lazy (files written only when an agent writes them)."""
        with self._lock:
            return tuple(self._tree_files)

    def materialize(self) -> tuple[str, ...]:
        """Make every lazy worktree of this session a full checkout (for a command or a CLI agent's shell, which
        read files directly); returns the repos that were lazy.

        Raises:
            WorkspaceError: git failed.
        """
        with self._lock:
            lazy, self._tree_files = self._tree_files, {}
        for repo, files in lazy.items():
            files.close()
            context = self.contexts[repo]
            try:
                self._git.materialize(context.worktree_path)
            except GitError as error:
                raise WorkspaceError(f"{repo}: could not write the files of {context.worktree_path}: {error}") from error
        return tuple(lazy)

    def close(self) -> None:
        """Stop the readers of lazy worktrees' files (they restart when read again)."""
        with self._lock:
            files = list(self._tree_files.values())
        for reader in files:
            reader.close()

    def protected_branches(self, repo: str) -> tuple[str, ...]:
        """The repo's `protected_branches` patterns."""
        return tuple(self._settings[repo].protected_branches)

    def note_head(self, repo: str, sha: str) -> None:
        """Record that the repo's branch moved to `sha` outside this session's commits (a merge at fan-in)."""
        self._set_head(repo, sha)

    def repo_contexts(self) -> dict[str, RepoContext]:
        """What repo-scoped tools need: each repo's session worktree, branch and SHAs."""
        with self._lock:
            lazy = dict(self._tree_files)
        return {
            name: evolve(context.repo_context(), tree_files=lazy.get(name)) for name, context in self.contexts.items()
        }

    def snapshot(self) -> dict[str, str]:
        """Each repo's session branch head, read from git (for checkpoints)."""
        heads = {}
        for name, context in self.contexts.items():
            sha = self._git.resolve_commit(context.repo_root, context.branch_ref)
            if sha is None:
                raise WorkspaceError(f"{name}: session branch {context.branch_name} no longer exists")
            heads[name] = sha
        return heads

    def on_turn_wrapper(self, downstream: OnTurn | None = None) -> OnTurn:
        """An on_turn callback that commits each turn's writes, then passes the turn (with `commits`) on.

        When a commit fails, `downstream` still gets the turn (with the commits that worked) before the
        WorkspaceCommitError propagates, so the turn is recorded either way.
        """

        def on_turn(turn: AgentTurn) -> None:
            try:
                committed = self.commit_turn(turn)
            except WorkspaceCommitError as error:
                if downstream is not None:
                    downstream(error.turn or turn)
                raise
            if downstream is not None:
                downstream(committed)

        return on_turn

    def watch_tool_stage(self, protected: Sequence[Path] = ()) -> ToolStageWatch:
        """Watch every repo's worktree from now, before a tool stage's command; its `finish` commits what the
        stage changed as a turn of the stage (`protected`: the run's own state, never committed).

        Raises:
            GitError: `git status` failed in a worktree.
        """
        roots = {name: context.worktree_path for name, context in self.contexts.items()}
        return ToolStageWatch(WorktreeWatch(self._git, roots), self._commit_tool_stage, protected)

    def _commit_tool_stage(self, turn: AgentTurn, run: ToolStageRun) -> AgentTurn:
        committer = RepoCommitter(
            self._git, self._clock, None, self._emit, message=run.message, trailers=run.trailers()
        )
        return self.commit_turn(turn, committer=committer)

    def commit_turn(self, turn: AgentTurn, *, committer: RepoCommitter | None = None) -> AgentTurn:
        """Commit the turn's writes in every repo they touch; return the turn with `commits` added.

        Args:
            turn: The turn, with its `files_written`.
            committer: Commits with another message and trailers (a tool stage's); default: the session's.

        Raises:
            WorkspaceCommitError: Some repo's commit failed (others still committed; `error.turn` has them).
        """
        if not self._contexts:
            return turn
        committer = committer or self._committer
        commits: list[TurnCommit] = []
        failures: list[str] = []
        for repo, paths in turn.writes_by_repo().items():
            context = self.contexts.get(repo)
            if context is None:
                self._report_unknown(turn, repo, paths)
                continue
            try:
                commit = committer.commit(
                    context,
                    self._settings[repo],
                    turn,
                    paths,
                    on_head=functools.partial(self._set_head, repo),
                )
            except WorkspaceError as error:
                failures.append(str(error))
                continue
            if commit is not None:
                commits.append(commit)
        committed = turn.with_commits((*turn.commits, *commits))
        if failures:
            raise WorkspaceCommitError("; ".join(failures), turn=committed)
        return committed

    def rollback(self, repo: str) -> WorkspaceContext:
        """Discard the repo's session work: branch back to its base SHA, worktree recreated from scratch."""
        return self.restore(repo, self._context(repo).base_sha, reason="rollback")

    def restore(self, repo: str, sha: str, *, reason: str = "restore") -> WorkspaceContext:
        """Put the repo's session branch at `sha` and recreate its worktree there (resume at a snapshot).

        In place, the repository itself is reset to `sha` and its untracked files are removed. The head the
        branch had (commits made after `sha`) stays reachable under `refs/orchestra/abandoned/<session>/<n>`;
        the WorkspaceRestored event names it. Uncommitted changes in the worktree are saved first, the same way
        (an UncommittedWorkSaved event); when they cannot be, nothing is discarded and this raises.

        Raises:
            WorkspaceError: Unknown repo, `sha` is not a commit, or git failed.
        """
        context = self._context(repo)
        if is_protected(context.branch_name, self._settings[repo].protected_branches):
            raise ProtectedBranchError(f"{repo}: refusing to move protected branch {context.branch_name!r}")
        target = self._git.resolve_commit(context.repo_root, sha)
        if target is None:
            raise WorkspaceError(f"{repo}: {sha!r} is not a commit in {context.repo_root}")
        try:
            with self._git.lock(context.repo_root):
                if context.isolation == IN_PLACE:
                    self._check_in_place(context)
                previous, kept = self._keep_abandoned(context, target)
                self.save_uncommitted(context, reason)
                if context.isolation == IN_PLACE:
                    self._git.discard_changes(context.repo_root, target)
                else:
                    self._recreate_worktree(context, target)
        except GitError as error:
            raise WorkspaceError(
                f"{repo}: could not restore {context.branch_name} to {target}: {error}"
            ) from error
        self._set_head(repo, target)
        self._emit(WorkspaceRestored(
                session_id=context.session_id, repo=repo, branch=context.branch_name, sha=target, reason=reason,
                previous_sha=previous, abandoned_ref=kept, level="warning" if kept else "info",
            ))
        return self.contexts[repo]

    def save_uncommitted(self, context: WorkspaceContext, reason: str) -> UncommittedWorkSaved | None:
        """Commit what is uncommitted in the context's worktree under an abandoned ref, with a warning event,
        before it is reset or removed (see `uncommitted.save_uncommitted`).

        Raises:
            GitError: git failed (do not discard the worktree then).
        """
        return save_uncommitted(self._git, context, reason, self._emit, when=self._clock.now())

    def _keep_abandoned(self, context: WorkspaceContext, target: str) -> tuple[str, str]:
        """The branch's head before the restore, and the abandoned ref that keeps it ("" when it is `target`)."""
        previous = self._git.resolve_commit(context.repo_root, context.branch_ref) or ""
        if not previous or previous == target:
            return previous, ""
        return previous, keep_abandoned(self._git, context.repo_root, context.session_id, previous)

    def _check_in_place(self, context: WorkspaceContext) -> None:
        current = self._git.current_branch(context.repo_root)
        if current != context.branch_name:
            raise WorkspaceError(
                f"{context.repo_name}: {context.repo_root} is on {current or 'a detached HEAD'}, not the session "
                f"branch {context.branch_name}; refusing to reset it"
            )

    def _recreate_worktree(self, context: WorkspaceContext, target: str) -> None:
        root, path = context.repo_root, context.worktree_path
        self._git.worktree_prune(root)
        if any(worktree.path.resolve() == path.resolve() for worktree in self._git.worktrees(root)):
            self._git.worktree_remove(root, path)
        elif path.exists():
            raise WorkspaceError(f"{context.repo_name}: {path} exists but is not a worktree of {root}")
        self._git.update_ref(root, context.branch_ref, target, expected_old=None)
        path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock:
            lazy = self._tree_files.pop(context.repo_name, None)
        if lazy is None:
            self._git.worktree_add(root, path, context.branch_name)
        else:  # a lazy worktree is made again lazy: its reader starts over on the new one
            lazy.close()
            self._git.worktree_add_lazy(root, path, context.branch_name)
            files = self._git.tree_files(path)
            if files is not None:
                with self._lock:
                    self._tree_files[context.repo_name] = files
        copy_included_files(
            self._git, root, path, self._emit, session_id=context.session_id, repo=context.repo_name
        )

    def _context(self, repo: str) -> WorkspaceContext:
        context = self.contexts.get(repo)
        if context is None:
            raise WorkspaceError(
                f"{repo!r} is not a repo of this workspace ({', '.join(self._contexts) or 'none'})"
            )
        return context

    def _set_head(self, repo: str, sha: str) -> None:
        with self._lock:
            self._contexts[repo] = self._contexts[repo].with_head(sha)

    def _report_unknown(self, turn: AgentTurn, repo: str, paths: list[str]) -> None:
        self._emit(
            WritesNotCommitted(
                session_id=self.session_id,
                repo=repo,
                node_id=turn.node_id,
                turn_number=turn.turn_number,
                paths=paths,
                reason="not a workspace repo",
            )
        )
