"""A session started again from the beginning (it stopped before its first checkpoint): the session branches it
recorded are reused, made again at their recorded base where they are gone, and what its stopped run made
without living to record it (a worktree in the session's own directory, and its branch) is removed first."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from orchestra_core.model.settings import RepoSettings
from orchestra_core.model.workspace_events import SessionCleanedUp, WorkspaceEvent
from orchestra_core.ports.git import Git, GitError, WorktreeInfo
from orchestra_core.workspace.abandoned import keep_abandoned
from orchestra_core.workspace.context import IN_PLACE, WorkspaceContext
from orchestra_core.workspace.errors import WorkspaceError
from orchestra_core.workspace.setup import configured_path

UNRECORDED = "made by a start that stopped before recording it; the session starts again from the beginning"


def recreate_branches(git: Git, contexts: Sequence[WorkspaceContext]) -> None:
    """Make each recorded session branch that is gone again, at its recorded base.

    Raises:
        WorkspaceError: The recorded base is not a commit of the repository (the message names both).
    """
    for context in contexts:
        root = context.repo_root
        if git.resolve_commit(root, context.branch_ref) is not None:
            continue
        if git.resolve_commit(root, context.base_sha) is None:
            raise WorkspaceError(
                f"{context.repo_name}: session branch {context.branch_name} is gone and its recorded base "
                f"{context.base_sha} is not a commit of {root}"
            )
        git.create_branch(root, context.branch_name, context.base_sha)


def discard_unrecorded(
    git: Git,
    repos: Mapping[str, RepoSettings],
    config_dir: Path,
    worktrees_dir: Path,
    session_id: str,
    emit: Callable[[WorkspaceEvent], None],
) -> list[str]:
    """Remove the worktrees a session's stopped run made in its own directory (`worktrees_dir/<repo>`) without
    recording them, and their branches: only this session's runs make worktrees there, and a session that
    recorded no branch has nothing to keep in them. A branch head that is not the repo's base is kept under
    `refs/orchestra/abandoned/<session>/<n>` first. Each removal is recorded (SessionCleanedUp); returns the repos.

    A repository git cannot read is left alone: the setup that follows reports it.
    """
    removed = []
    for name, settings in repos.items():
        path = worktrees_dir / name
        if settings.isolation == IN_PLACE or not path.exists():
            continue
        root = configured_path(settings, config_dir)
        try:
            git.worktree_prune(root)
            left = next((w for w in git.worktrees(root) if w.path.resolve() == path.resolve()), None)
            if left is None:
                continue  # not a worktree: the setup refuses the directory, saying where it is
            event = _remove(git, root, left, settings, session_id)
        except GitError:
            continue
        emit(SessionCleanedUp(session_id=session_id, repo=name, worktree_path=str(path), reason=UNRECORDED, **event))
        removed.append(name)
    return removed


def _remove(git: Git, root: Path, left: WorktreeInfo, settings: RepoSettings, session_id: str) -> dict[str, str]:
    git.worktree_remove(root, left.path)
    branch = left.branch or ""
    head = git.resolve_commit(root, f"refs/heads/{branch}") if branch else None
    kept = ""
    if branch and head is not None:
        if head != git.resolve_commit(root, settings.base_ref):
            kept = keep_abandoned(git, root, session_id, head)
        git.delete_branch(root, branch)
    return {"branch": branch, "head_sha": head or left.head or "", "abandoned_ref": kept}


__all__ = ["UNRECORDED", "discard_unrecorded", "recreate_branches"]
