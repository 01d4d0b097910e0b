"""`orchestra show`: from a commit in any workspace repo to the project, session store and agent turn behind it.

The projects tried, in order: the one `--config` names, the project around the current directory (a session
worktree's own project included), then every project linked in the repository's git config
(`orchestra.project`, see orchestra_core/workspace/projects.py). Each is opened through the composition
root, so its orchestra.yaml decides the store (SQLite file or CXDB server).
"""

from __future__ import annotations

from contextlib import suppress
from pathlib import Path
from typing import Any

from attrs import evolve, frozen

from orchestra_cli.errors import one_line
from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.layout import STATE_DIR, ProjectLayout
from orchestra_core.model.store_errors import SessionNotFoundError
from orchestra_core.ports.git import FileChange, Git, GitError, LogEntry
from orchestra_core.ports.session_store import SessionInfo
from orchestra_core.workspace.correlation import CommitTurn, OrchestraTrailers, find_commit_turn
from orchestra_core.workspace.projects import linked_projects


class CommitNotTracedError(OrchestraError):
    """The commit cannot be traced to a recorded agent turn; the message says what was tried."""


@frozen
class CommitFacts:
    """A commit as git has it: where, who, what message and which files."""

    repo_root: Path
    entry: LogEntry
    files: tuple[FileChange, ...]

    @property
    def sha(self) -> str:
        return self.entry.sha


@frozen
class TracedCommit:
    """A commit with the recorded turn that made it.

    Attributes:
        commit: The commit.
        trailers: Its Orchestra trailers.
        project_root: The project whose store recorded the turn.
        store_location: That store (a file path or a CXDB address).
        session: The trailers' session.
        found: The turn, and the session holding it (a parallel branch's forked session, or the same).
        others: For a copied commit (`found.exact` False), the other sessions, each "session ID in STORE",
            whose turn matches it as well: projects sharing a repository reuse session ids.
    """

    commit: CommitFacts
    trailers: OrchestraTrailers
    project_root: Path
    store_location: str
    session: SessionInfo
    found: CommitTurn
    others: tuple[str, ...] = ()


@frozen
class _Project:
    root: Path
    config: Path | None = None


def trace_commit(rev: str, cwd: Path, git: Git, config: Path | None = None) -> TracedCommit:
    """Resolve `rev` in the repository containing `cwd` and find the agent turn behind it.

    Raises:
        CommitNotTracedError: Not in a repository, `rev` names no commit, the commit has no Orchestra
            trailers, or no project tried recorded it (each reason in one line).
    """
    commit = read_commit(git, cwd, rev, config)
    subject = commit.entry.subject
    trailers = OrchestraTrailers.parse(commit.entry.trailers)
    if trailers is None:
        raise CommitNotTracedError(
            f"commit {commit.sha[:12]} ({subject}) has no Orchestra trailers (Orchestra-Session, Orchestra-Node, "
            "Orchestra-Turn): it was not made by an Orchestra agent turn"
        )
    tried: list[str] = []
    copies: list[TracedCommit] = []
    for project in _projects(git, cwd, commit.repo_root, config):
        traced = _trace_in(project, commit, trailers, tried)
        if traced is not None and traced.found.exact:
            return traced  # the store that recorded this very SHA: no other project can claim it
        if traced is not None:
            copies.append(traced)
    if copies:
        # Projects sharing a repository reuse session ids: a copy matched by node, turn and subject in one
        # store may be another project's session. Prefer the stores whose session ran the trailers' pipeline.
        preferred = [c for c in copies if _same_pipeline(c)] or copies
        first, *others = preferred
        return evolve(first, others=tuple(f"session {o.session.session_id} in {o.store_location}" for o in others))
    where = "; ".join(tried) or (
        "no project to look in: the current directory is in no Orchestra project and the repository links "
        "none (git config orchestra.project); run `orchestra show` in the project or pass --config"
    )
    raise CommitNotTracedError(
        f"commit {commit.sha[:12]} (Orchestra-Session {trailers.session_id}) is not recorded: {where}"
    )


def _same_pipeline(traced: TracedCommit) -> bool:
    wanted = traced.trailers.pipeline
    return wanted is None or traced.session.metadata.pipeline in (None, "", wanted)


def read_commit(git: Git, cwd: Path, rev: str, config: Path | None = None) -> CommitFacts:
    """The commit `rev` names in the repository containing `cwd`, else in the project's workspace repos.

    Outside any repository (a project whose repos are subdirectories or siblings of it), the workspace repos
    that orchestra.yaml names are asked: the one where `rev` names a commit is used.

    Raises:
        CommitNotTracedError: `cwd` is in no repository and no workspace repo (or several, with different
            commits) knows `rev`, or `rev` names no commit in the repository around `cwd`.
    """
    try:
        info = git.repository(cwd)
    except GitError as error:
        return _commit_in_workspace_repos(git, cwd, rev, config, one_line(error.stderr or str(error)))
    root = info.toplevel or cwd
    sha = git.resolve_commit(cwd, rev)
    if sha is None:
        raise CommitNotTracedError(f"{rev!r} names no commit in {root}")
    return _commit_facts(git, root, sha)


def _commit_facts(git: Git, repo: Path, sha: str) -> CommitFacts:
    [entry] = git.log(repo, sha, max_count=1)
    return CommitFacts(repo, entry, git.changed_files(repo, sha))


def _commit_in_workspace_repos(git: Git, cwd: Path, rev: str, config: Path | None, why: str) -> CommitFacts:
    repos = _workspace_repos(cwd, config)
    found: dict[str, tuple[Path, str]] = {}
    for name, path in repos.items():
        with suppress(GitError, OSError):
            if path.is_dir() and (sha := git.resolve_commit(path, rev)) is not None:
                found[name] = (path, sha)
    if len({sha for _, sha in found.values()}) == 1:
        path, sha = next(iter(found.values()))
        return _commit_facts(git, path, sha)
    if found:
        where = ", ".join(f"{name}: {sha[:12]}" for name, (_, sha) in found.items())
        raise CommitNotTracedError(
            f"{rev!r} names a different commit in each of the project's repos ({where}); run `orchestra show` "
            f"inside one of them (cd {next(iter(found.values()))[0]}) or give a SHA"
        )
    if repos:
        raise CommitNotTracedError(
            f"{rev!r} names no commit in the project's workspace repos ({', '.join(repos)}), and {cwd} is not "
            "inside a git repository"
        )
    raise CommitNotTracedError(
        f"{cwd} is not inside a git repository ({why}); run `orchestra show` in a workspace repo"
    )


def _workspace_repos(cwd: Path, config: Path | None) -> dict[str, Path]:
    """The workspace repos orchestra.yaml names for the project around `cwd` (or `config`'s); none when unknown."""
    from orchestra_core.workspace.setup import configured_path

    root = _project_of_config(config.expanduser().resolve()) if config is not None else enclosing_project(cwd)
    if root is None:
        return {}
    try:
        settings = _container(_Project(root, config)).settings()
    except OrchestraError:
        return {}  # a broken orchestra.yaml: the error of `cwd` outside a repository is the one to report
    return {name: configured_path(repo, settings.base_dir) for name, repo in settings.workspace.repos.items()}


def _projects(git: Git, cwd: Path, repo_root: Path, config: Path | None) -> list[_Project]:
    """The projects to try, each once (compared as resolved paths), in order."""
    candidates: list[_Project] = []
    if config is not None:
        absolute = config.expanduser().resolve()
        candidates.append(_Project(_project_of_config(absolute), absolute))
    here = enclosing_project(cwd)
    if here is not None:
        candidates.append(_Project(here))
    with suppress(GitError):  # a repository whose config cannot be read links nothing
        candidates += [_Project(root) for root in linked_projects(git, repo_root)]
    unique: dict[Path, _Project] = {}
    for project in candidates:
        unique.setdefault(_resolved(project.root), project)
    return list(unique.values())


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except OSError:
        return path


def enclosing_project(cwd: Path) -> Path | None:
    """The project `cwd` is in: the owner of a session worktree under `.orchestra/worktrees/`, else the
    nearest directory holding orchestra.yaml or `.orchestra/`; None outside any project."""
    from orchestra_adapters.config.orchestra_yaml import CONFIG_NAME, find_project_root

    resolved = cwd.resolve()
    parts = resolved.parts
    for index in range(len(parts) - 1):
        if parts[index] == STATE_DIR and parts[index + 1] == ProjectLayout(Path()).worktrees_dir.name:
            return Path(*parts[:index])
    root = find_project_root(resolved)
    return root if (root / CONFIG_NAME).is_file() or (root / STATE_DIR).is_dir() else None


def _project_of_config(config: Path) -> Path:
    from orchestra_adapters.config.orchestra_yaml import find_project_root

    return find_project_root(config.parent)


def _trace_in(
    project: _Project, commit: CommitFacts, trailers: OrchestraTrailers, tried: list[str]
) -> TracedCommit | None:
    if not project.root.is_dir():
        tried.append(f"{project.root}: no longer exists")
        return None
    try:
        container = _container(project)
        store = _open_store(container)
    except OrchestraError as error:
        tried.append(f"{project.root}: {one_line(str(error))}")
        return None
    try:
        found = find_commit_turn(store, trailers, commit.sha, commit.entry.subject)
        session = store.get_session(trailers.session_id)
    except SessionNotFoundError:
        tried.append(f"{store.location}: no session {trailers.session_id}")
        return None
    except OrchestraError as error:
        tried.append(f"{store.location}: {one_line(str(error))}")
        return None
    finally:
        store.close()
    if found is None:
        tried.append(f"{store.location}: session {trailers.session_id} has no agent turn with this commit")
        return None
    return TracedCommit(commit, trailers, project.root, store.location, session, found)


def _container(project: _Project) -> Any:
    from orchestra_adapters.container import build_container

    return build_container(config_path=project.config, cwd=project.root)


def _open_store(container: Any) -> Any:
    """The project's store; a SQLite file that does not exist is not created (nothing was recorded there)."""
    from orchestra_adapters.storage.factory import sqlite_path

    settings = container.settings()
    if settings.storage.backend == "sqlite":
        path = sqlite_path(settings.storage, container.project_root())
        if not path.is_file():
            raise CommitNotTracedError(f"no session store at {path}")
    return container.session_store()
