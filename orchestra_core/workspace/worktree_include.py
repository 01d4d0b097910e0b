"""`.worktreeinclude`: gitignored files a repo lists there (`.env`, local config) are copied from the user's
checkout into each new session or parallel-branch worktree, so agents have them.

Only files git ignores are copied (tracked files come with the checkout). Nothing in `.git` or
`.orchestra` is ever copied (silently), a symbolic link only when it points inside the repository, a file
larger than MAX_INCLUDED_BYTES not at all; those are warnings (`IncludedFileSkipped`). File modes are kept.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Callable
from pathlib import Path

from orchestra_core.model.workspace_events import IncludedFilesCopied, IncludedFileSkipped, WorkspaceEvent
from orchestra_core.ports.git import Git, GitError

INCLUDE_FILE = ".worktreeinclude"
MAX_INCLUDED_BYTES = 10 * 1024 * 1024
_NEVER = (".git", ".orchestra")
_MAX_INCLUDE_FILE_BYTES = 1024 * 1024


def copy_included_files(
    git: Git,
    repo_root: Path,
    worktree: Path,
    emit: Callable[[WorkspaceEvent], None],
    *,
    session_id: str = "",
    repo: str = "",
) -> list[str]:
    """Copy the ignored files `repo_root/.worktreeinclude` matches into `worktree`; return the copied paths.

    Never fails the run: a file that cannot be copied is skipped with a warning event.
    """
    patterns = _patterns(repo_root)
    if not patterns:
        return []

    def skip(path: str, reason: str) -> None:
        emit(IncludedFileSkipped(session_id=session_id, repo=repo, path=path, reason=f"{path}: {reason}"))

    try:
        candidates = git.untracked_matching(repo_root, patterns)
        ignored = set(git.ignored_paths(repo_root, candidates)) if candidates else set()
    except GitError as error:
        skip(INCLUDE_FILE, f"could not list the files it names: {error}")
        return []
    copied = []
    for path in candidates:
        if path not in ignored or _never_copied(path):
            continue  # untracked but not ignored: the user's work in progress; or Orchestra's and git's own
        reason = _copy(repo_root, worktree, path)
        if reason:
            skip(path, reason)
        else:
            copied.append(path)
    if copied:
        emit(IncludedFilesCopied(session_id=session_id, repo=repo, worktree_path=str(worktree), paths=tuple(copied)))
    return copied


def _patterns(repo_root: Path) -> list[str]:
    """The lines of `.worktreeinclude` (a regular file at the repo's top level; a link is not followed)."""
    file = repo_root / INCLUDE_FILE
    try:
        info = file.lstat()
    except OSError:
        return []
    if not stat.S_ISREG(info.st_mode) or info.st_size > _MAX_INCLUDE_FILE_BYTES:
        return []
    return file.read_text(encoding="utf-8", errors="surrogateescape").splitlines()


def _never_copied(path: str) -> bool:
    """Inside `.git` or `.orchestra` (the state directory, with the session's worktrees and the store)."""
    parts = path.split("/")
    return any(part.lower() in _NEVER for part in parts) or ".." in parts


def _copy(repo_root: Path, worktree: Path, path: str) -> str:
    """Copy one file; the reason it was skipped, "" when copied."""
    source, target = repo_root / path, worktree / path
    root = repo_root.resolve()
    if not source.parent.resolve().is_relative_to(root):
        return "its directory leads outside the repository"
    try:
        info = source.lstat()
        if os.path.lexists(target):
            return "already in the worktree"
        # checked before mkdir too (resolve follows the links that exist): no directory is made outside
        if not _inside(target.parent, worktree):
            return "its directory in the worktree leads outside it"
        target.parent.mkdir(parents=True, exist_ok=True)
        if not _inside(target.parent, worktree):
            return "its directory in the worktree leads outside it"
        if stat.S_ISLNK(info.st_mode):
            return _copy_link(root, source, target)
        if not stat.S_ISREG(info.st_mode):
            return "not a regular file"
        if info.st_size > MAX_INCLUDED_BYTES:
            return f"larger than {MAX_INCLUDED_BYTES // (1024 * 1024)} MiB ({info.st_size} bytes)"
        shutil.copyfile(source, target, follow_symlinks=False)
        os.chmod(target, stat.S_IMODE(info.st_mode))
    except OSError as error:
        return f"could not copy: {error.strerror or error}"
    return ""


def _inside(path: Path, top: Path) -> bool:
    return path.resolve().is_relative_to(top.resolve())


def _copy_link(root: Path, source: Path, target: Path) -> str:
    """A symbolic link is recreated (relative to where it is) only when it resolves inside the repository."""
    resolved = source.resolve()
    if not resolved.is_relative_to(root) or any(part.lower() in _NEVER for part in resolved.relative_to(root).parts):
        return "a symbolic link pointing outside the repository (or into .git/.orchestra): not copied"
    os.symlink(os.path.relpath(resolved, source.parent.resolve()), target)
    return ""
