"""The repo -> project link: which Orchestra projects used a repository, kept in the repository's git config."""

from __future__ import annotations

from pathlib import Path

from orchestra_core.ports.git import Git

PROJECT_KEY = "orchestra.project"


def link_project(git: Git, repo: Path, project_root: Path) -> bool:
    """Record in `repo`'s own config (shared by its worktrees) that `project_root` works in it.

    Idempotent; True when the link is new. `orchestra show` follows these links from any checkout of the
    repository to the project's session store.

    Raises:
        GitError: The config could not be read or written.
    """
    return git.add_config_value(repo, PROJECT_KEY, str(Path(project_root).resolve()))


def linked_projects(git: Git, repo: Path) -> tuple[Path, ...]:
    """The project roots linked to the repository containing `repo`, oldest link first.

    Raises:
        GitError: `repo` is not in a git repository.
    """
    return tuple(Path(value) for value in git.config_values(repo, PROJECT_KEY) if value.strip())
