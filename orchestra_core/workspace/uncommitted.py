"""Uncommitted work is saved before Orchestra resets, rebuilds or removes a worktree (resume, restore, rollback, a
parallel branch's worktree at fork or join): every change `git status` lists (modified, new, deleted or renamed
files; ignored ones are not work) is committed on top of the worktree's HEAD and the commit kept under
`refs/orchestra/abandoned/<session>/<n>`, with an `UncommittedWorkSaved` warning naming the files and the ref."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from orchestra_core.model.workspace_events import UncommittedWorkSaved, WorkspaceEvent
from orchestra_core.ports.git import Git, Identity
from orchestra_core.workspace.abandoned import keep_abandoned
from orchestra_core.workspace.committer import AGENT_EMAIL, COMMITTER_NAME, split_committable
from orchestra_core.workspace.context import WorkspaceContext
from orchestra_core.workspace.messages import with_trailers

SAVED_TRAILER = "Orchestra-Saved"  # on a commit of uncommitted work: why it was saved (`resume`, `rollback`, ...)
LISTED_FILES = 50


def save_uncommitted(
    git: Git,
    context: WorkspaceContext,
    reason: str,
    emit: Callable[[WorkspaceEvent], None],
    *,
    when: datetime | None = None,
) -> UncommittedWorkSaved | None:
    """Commit what is uncommitted in the context's worktree under an abandoned ref; None when nothing is.

    Nothing in the worktree, its index or its branch changes: the commit is written with `commit-tree` and only
    the new `refs/orchestra/abandoned/<session>/<n>` points at it. A missing worktree (no `.git` in its
    directory) has nothing to save. Paths that are not clean paths inside the repo (a spelling of `.git`, `.orchestra`) and `.gitmodules`
    or `.gitattributes` whose content git's fsck refuses are left out (and named in the event).

    Args:
        git: The Git port.
        context: The repo, worktree and session (the worktree may have another HEAD than its branch's).
        reason: Why the worktree is about to be reset or removed (`resume`, `rollback`, `join`, ...).
        emit: Receives the UncommittedWorkSaved event (a warning).
        when: The commit's date (None: now, by git).

    Raises:
        GitError: git failed; the caller must not discard the worktree then.
    """
    worktree = context.worktree_path
    if not (worktree / ".git").exists():  # gone, or not a checkout of its own: git would answer for a parent
        return None
    found: list[str] = []
    for entry in git.status(worktree):
        found += [entry.path, *([entry.original_path] if entry.original_path else [])]
    if not found:
        return None
    paths, invalid, refused = split_committable(context, found)
    head = git.resolve_commit(worktree, "HEAD")
    if head is None or not paths:
        return None
    change = git.tree_with_files(worktree, head, paths)
    if not change.changed:
        return None
    identity = Identity(COMMITTER_NAME, AGENT_EMAIL, when)
    sha = git.commit_tree(
        worktree, change.tree, parents=[head], message=_message(context, reason, paths),
        author=identity, committer=identity,
    )  # fmt: skip
    ref = keep_abandoned(git, context.repo_root, context.session_id, sha)
    event = UncommittedWorkSaved(
        session_id=context.session_id, repo=context.repo_name, worktree_path=str(worktree),
        branch=context.branch_name, sha=sha, abandoned_ref=ref, reason=reason, paths=tuple(paths),
        left_out=(*invalid, *refused),
    )  # fmt: skip
    emit(event)
    return event


def _message(context: WorkspaceContext, reason: str, paths: Sequence[str]) -> str:
    listed = [f"- {path}" for path in paths[:LISTED_FILES]]
    if len(paths) > LISTED_FILES:
        listed.append(f"- ... and {len(paths) - LISTED_FILES} more")
    text = (
        f"Save uncommitted changes in {context.repo_name} before {reason}\n\n"
        f"{context.worktree_path} held changes nobody had committed when Orchestra was\n"
        f"about to reset or remove it ({reason}); they are kept here, on top of its HEAD:\n\n" + "\n".join(listed)
    )
    trailers = {
        "Orchestra-Pipeline": context.pipeline_name,
        "Orchestra-Session": context.session_id,
        SAVED_TRAILER: reason,
    }
    return with_trailers(text, trailers)

