"""Applying a cleanup plan: one cleanup at a time, each session under its lock, each repo under git's lock."""

from __future__ import annotations

import os
from contextlib import suppress
from pathlib import Path

from attrs import evolve

from orchestra_core.model.layout import ProjectLayout
from orchestra_core.model.workspace_events import SessionCleanedUp
from orchestra_core.ports.git import Git
from orchestra_core.ports.session_locks import SessionBusyError, SessionLocks
from orchestra_core.ports.session_store import SessionStore
from orchestra_core.session.api import append_record
from orchestra_core.workspace.abandoned import keep_abandoned
from orchestra_core.workspace.cleanup import (
    FORCED,
    REMOVE,
    RUNNING,
    CleanupError,
    CleanupItem,
    CleanupOptions,
    CleanupPlan,
    CleanupPlanner,
)

CLEANUP_LOCK = "cleanup"
"""The lock one `orchestra cleanup` holds while it changes anything (taken like a session's lock)."""


class Cleanup:
    """Plans, then (unless it is a dry run) removes what the plan says can go and records it."""

    def __init__(
        self, planner: CleanupPlanner, store: SessionStore, locks: SessionLocks, git: Git, project_root: Path
    ) -> None:
        self._planner, self._store, self._locks, self._git = planner, store, locks, git
        self._worktrees_dir = ProjectLayout(Path(project_root).resolve()).worktrees_dir

    def run(self, options: CleanupOptions, *, dry_run: bool = False) -> CleanupPlan:
        """The plan (dry run) or what was done: removed items carry the abandoned refs made for them.

        Raises:
            CleanupError: Another cleanup is running in this project.
            GitError, StoreError: git or the store failed (what was removed before is recorded).
        """
        if dry_run:
            return self._planner.plan(options)
        try:
            lease = self._locks.acquire(CLEANUP_LOCK)
        except SessionBusyError:
            raise CleanupError(
                f"another `orchestra cleanup` is running in this project (pid {self._locks.holder(CLEANUP_LOCK)})"
            ) from None
        try:
            plan = self._planner.plan(options)
            done = self._apply(plan, options)
            for root in self._planner.repo_roots().values():
                self._git.worktree_prune(root)
            _remove_empty_dirs(self._worktrees_dir)
            return done
        finally:
            lease.release()

    def _apply(self, plan: CleanupPlan, options: CleanupOptions) -> CleanupPlan:
        items = list(plan.items)
        for session_id in dict.fromkeys(item.session_id for item in plan.removed):
            try:
                lease = self._locks.acquire(session_id)
            except SessionBusyError:  # a resume started since the plan
                items = [
                    evolve(item, action="keep", reason=RUNNING, detail="a runner took its lock")
                    if item.session_id == session_id and item.action == REMOVE else item
                    for item in items
                ]
                continue
            try:
                items = [
                    self._remove(self._planner.recheck(item, options))
                    if item.session_id == session_id and item.action == REMOVE else item
                    for item in items
                ]
            finally:
                lease.release()
        return evolve(plan, items=tuple(items))

    def _remove(self, item: CleanupItem) -> CleanupItem:
        """Remove one repo's worktrees and branches (nothing when the recheck keeps it) and record each branch."""
        if item.action != REMOVE:
            return item
        root = Path(item.repo_root)
        kept: list[str] = []
        with self._git.lock(root):
            for branch in item.unsafe if item.reason == FORCED else ():
                kept.append(keep_abandoned(self._git, root, item.session_id, item.heads[branch]))
            worktree_of = {}
            for path in item.worktrees:
                worktree_of[self._branch_in(root, Path(path))] = path
                self._git.worktree_remove(root, Path(path))
            for branch in item.branches:
                self._git.delete_branch(root, branch)
        by_branch = dict(zip(item.unsafe, kept, strict=True)) if kept else {}
        for branch in item.branches:
            append_record(
                self._store,
                item.session_id,
                SessionCleanedUp(
                    repo=item.repo, branch=branch, head_sha=item.heads[branch],
                    worktree_path=worktree_of.get(branch, ""), reason=item.reason,
                    abandoned_ref=by_branch.get(branch, ""),
                ),
            )
        return evolve(item, abandoned_refs=tuple(kept))

    def _branch_in(self, root: Path, path: Path) -> str | None:
        for worktree in self._git.worktrees(root):
            if worktree.path.resolve() == path.resolve():
                return worktree.branch
        return None


def _remove_empty_dirs(top: Path) -> None:
    """Remove the directories under `top` that hold nothing (no file anywhere below them); `top` stays.

    A worktree (a directory with `.git`) is not looked into: the empty directories of a running or kept
    session's files are not cleanup's to remove.
    """
    if not top.is_dir():
        return
    found = []
    for current, dirs, _files in os.walk(top, followlinks=False):
        dirs[:] = [name for name in dirs if not os.path.lexists(os.path.join(current, name, ".git"))]
        found.append(Path(current))
    for directory in reversed(found):  # the deepest first
        if directory != top:
            with suppress(OSError):  # not empty (or not ours to remove): it stays
                directory.rmdir()
