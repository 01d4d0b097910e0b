"""Rollback on failure: every repo of a failed session put back as it was before the run, its work kept.

The session's worktrees (its own and its parallel branches') are removed and its branches deleted; an
`in_place` checkout goes back to the branch (or commit) it was on, its untracked non-ignored files removed
(an in_place run starts from a clean checkout, so those came from the run) and its ignored files kept.
Every head the session reached stays reachable under `refs/orchestra/abandoned/<session>/<n>`, and a
`SessionRolledBack` event per repo records where; what a worktree held uncommitted is saved the same way first
(an `UncommittedWorkSaved` warning).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

from attrs import evolve

from orchestra_core.model.workspace_events import SessionRolledBack, WorkspaceEvent
from orchestra_core.ports.git import Git, GitError
from orchestra_core.workspace.abandoned import keep_abandoned
from orchestra_core.workspace.context import IN_PLACE, WorkspaceContext
from orchestra_core.workspace.errors import ProtectedBranchError, WorkspaceError
from orchestra_core.workspace.naming import is_protected
from orchestra_core.workspace.session import WorkspaceSession

ROLLBACK = "rollback"
Save = Callable[[WorkspaceContext, str], object]  # WorkspaceSession.save_uncommitted


def roll_back_session(
    session: WorkspaceSession, git: Git, worktrees_dir: Path, emit: Callable[[WorkspaceEvent], None]
) -> list[SessionRolledBack]:
    """Undo the session's branches and worktrees in every repo; return (and emit) one event per repo.

    Args:
        session: The failed run's workspace (its main-line contexts).
        git: The Git port.
        worktrees_dir: The session's worktrees directory (`.orchestra/worktrees/<session>`); removed when
            rollback leaves it empty.
        emit: Receives each repo's SessionRolledBack event.

    Raises:
        WorkspaceError: A repo could not be rolled back (the other repos still were; the message names all).
    """
    events: list[SessionRolledBack] = []
    failures: list[str] = []
    for name, context in session.contexts.items():
        try:
            save = session.save_uncommitted
            event = _roll_back_repo(git, context, session.protected_branches(name), worktrees_dir, save)
        except (GitError, WorkspaceError) as error:
            failures.append(f"{name}: {error}")
            continue
        events.append(event)
        emit(event)
    _remove_if_empty(worktrees_dir)
    if failures:
        raise WorkspaceError("rollback failed: " + "; ".join(failures))
    return events


def _roll_back_repo(
    git: Git, context: WorkspaceContext, protected: tuple[str, ...], worktrees_dir: Path, save: Save
) -> SessionRolledBack:
    root, branch = context.repo_root, context.branch_name
    if is_protected(branch, protected):
        raise ProtectedBranchError(f"refusing to delete protected branch {branch!r}")
    with git.lock(root):
        head = git.resolve_commit(root, context.branch_ref) or context.head_sha
        kept = keep_abandoned(git, root, context.session_id, head) if head != context.base_sha else ""
        _remove_parallel_branches(git, context, protected, worktrees_dir, head, save)
        if context.isolation == IN_PLACE:
            if git.current_branch(root) == context.branch_name:
                save(context, ROLLBACK)
            _restore_checkout(git, context, head)
        else:
            if _is_worktree(git, root, context.worktree_path):
                save(context, ROLLBACK)
            _remove_worktree(git, root, context.worktree_path)
        if git.resolve_commit(root, context.branch_ref) is not None:
            git.delete_branch(root, branch)
    return SessionRolledBack(
        session_id=context.session_id, repo=context.repo_name, branch=branch, head_sha=head,
        base_sha=context.base_sha, abandoned_ref=kept, level="warning",
    )


def _remove_parallel_branches(
    git: Git, context: WorkspaceContext, protected: tuple[str, ...], worktrees_dir: Path, session_head: str, save: Save
) -> None:
    """Parallel branches' worktrees (under the session's directory; what they hold uncommitted saved first) and git
    branches (`<branch>--...`)."""
    root = context.repo_root
    git.worktree_prune(root)
    inside = worktrees_dir.resolve()
    for worktree in git.worktrees(root):
        if worktree.path.resolve() != context.worktree_path.resolve() and worktree.path.resolve().is_relative_to(inside):
            save(evolve(context, worktree_path=worktree.path, branch_name=worktree.branch or ""), ROLLBACK)
            git.worktree_remove(root, worktree.path)
    for name in git.branches(root):
        if not name.startswith(f"{context.branch_name}--") or is_protected(name, protected):
            continue
        head = git.resolve_commit(root, f"refs/heads/{name}")
        if head is not None and head not in (session_head, context.base_sha):
            keep_abandoned(git, root, context.session_id, head)
        git.delete_branch(root, name)


def _restore_checkout(git: Git, context: WorkspaceContext, head: str) -> None:
    """The in_place checkout back where it was: what the run left uncommitted discarded, then the original
    branch (or commit) checked out again."""
    root = context.repo_root
    if git.current_branch(root) == context.branch_name:
        git.discard_changes(root, head)
    git.checkout(root, _original_checkout(git, context))


def _original_checkout(git: Git, context: WorkspaceContext) -> str:
    """What the checkout was on before the run: recorded at setup (or, by a resume, the branch the checkout
    was on when it was not the session branch); else the configured `base_ref` when it is a local branch,
    else the one local branch at the base commit, else the base commit (detached)."""
    if context.original_checkout:
        return context.original_checkout
    root, ref = context.repo_root, context.base_ref
    if ref != "HEAD" and git.resolve_commit(root, f"refs/heads/{ref}") is not None:
        return ref
    at_base = [
        name for name in git.branches(root)
        if name != context.branch_name and git.resolve_commit(root, f"refs/heads/{name}") == context.base_sha
    ]
    return at_base[0] if len(at_base) == 1 else context.base_sha


def _is_worktree(git: Git, root: Path, path: Path) -> bool:
    return any(listed.path.resolve() == path.resolve() for listed in git.worktrees(root))


def _remove_worktree(git: Git, root: Path, path: Path) -> None:
    if _is_worktree(git, root, path):
        git.worktree_remove(root, path)


def _remove_if_empty(directory: Path) -> None:
    """Remove the empty directories left in `directory` (parallel branches' parents), then it when empty."""
    if not directory.is_dir() or directory.is_symlink():
        return
    for parent, _dirs, _files in sorted(os.walk(directory), key=lambda entry: -len(entry[0])):
        with suppress(OSError):  # not empty: something the run did not make is kept
            Path(parent).rmdir()
