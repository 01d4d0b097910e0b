"""Keep `.orchestra/` out of `git status`: a line in `info/exclude` of every repository it lies in."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from orchestra_core.model.layout import ProjectLayout
from orchestra_core.ports.git import Git, GitError


def exclude_state_dir(git: Git, project_root: Path, repo_roots: Sequence[Path] = ()) -> None:
    """Add `.orchestra/` to `info/exclude` of every repository it lies in (the project's own included).

    Keeps worktrees, run logs and the store out of `git status`; idempotent. A project outside every git
    repository (and without `repo_roots`) needs nothing.
    """
    roots = list(repo_roots)
    try:
        project_repo = git.repository(project_root)
    except GitError:
        project_repo = None
    if project_repo is not None and project_repo.toplevel is not None:
        roots.append(project_repo.toplevel.resolve())
    state = ProjectLayout(project_root).state_dir
    for root in dict.fromkeys(roots):
        if state.is_relative_to(root):
            git.add_exclude(root, f"/{state.relative_to(root).as_posix()}/")
