"""Remotes at session start: clone a repo whose `path` is missing, fetch one that exists, and on a resume
fetch the session branches so the checkpoint's commits are there."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from orchestra_core.model.remote_urls import redact_url
from orchestra_core.model.settings import RepoSettings
from orchestra_core.model.workspace_events import RepoCloned, RepoFetched, WorkspaceEvent
from orchestra_core.ports.git import Git, GitError
from orchestra_core.ports.git_remotes import GitRemotes, RemoteError
from orchestra_core.workspace.errors import WorkspaceConfigError
from orchestra_core.workspace.remote_probe import ORIGIN, needs_clone
from orchestra_core.workspace.setup import configured_path

_OWN_TRACKING = "refs/remotes/orchestra"


class RemoteSetup:
    """Brings every workspace repo with a `remote` up to date before a run (nothing else is touched).

    Raises WorkspaceConfigError (a problem per repo, under its `remote` key) before any session exists, so a
    bad URL or an unreachable remote is bad input: nothing is recorded.
    """

    def __init__(
        self, repos: Mapping[str, RepoSettings], remotes: GitRemotes | None, git: Git, config_dir: Path
    ) -> None:
        self._repos = {name: repo for name, repo in repos.items() if repo.remote}
        self._remotes = remotes
        self._git = git
        self._config_dir = config_dir

    def prepare(self) -> list[WorkspaceEvent]:
        """Clone each repo with a remote whose path does not exist; fetch the others. Returns the events
        (RepoCloned, RepoFetched) to record once the session exists.

        Raises:
            WorkspaceConfigError: No GitRemotes port, or a clone or fetch failed (every repo's problem listed).
        """
        events: list[WorkspaceEvent] = []
        problems: list[tuple[str, str]] = []
        for name, repo in self._repos.items():
            try:
                events.append(self._prepare_one(name, repo))
            except RemoteError as error:
                problems.append((f"workspace.repos.{name}.remote", str(error)))
        if problems:
            raise WorkspaceConfigError(problems)
        return events

    def fetch_session(self, heads: Mapping[str, tuple[str, str]]) -> list[WorkspaceEvent]:
        """Resume: make each recorded session branch and checkpoint commit present, fetching the branch
        from the remote when the commit is missing here (a fresh machine).

        Args:
            heads: Repo name -> (session branch, the checkpoint's head SHA).

        Raises:
            WorkspaceConfigError: The commit is neither here nor on the remote (the message names the repo
                and SHA), or the fetch failed.
        """
        events: list[WorkspaceEvent] = []
        problems: list[tuple[str, str]] = []
        for name, (branch, sha) in heads.items():
            repo = self._repos.get(name)
            if repo is None:
                continue
            root = configured_path(repo, self._config_dir)
            has_branch = self._git.resolve_commit(root, f"refs/heads/{branch}") is not None
            if has_branch and self._git.resolve_commit(root, sha) is not None:
                continue
            key = f"workspace.repos.{name}.remote"
            url = repo.remote or ""
            try:
                remote_sha = self._port(name).fetch_branch(root, url, branch)
            except RemoteError as error:
                problems.append((key, str(error)))
                continue
            events.append(RepoFetched(repo=name, url=url))
            if self._git.resolve_commit(root, sha) is None:
                where = f"its branch {branch} is at {remote_sha}" if remote_sha else f"it has no branch {branch}"
                problems.append(
                    (key, f"commit {sha} of the checkpoint is not on the remote {redact_url(url)} ({where}); "
                     "was it pushed? (push: on_checkpoint pushes every checkpoint)")
                )
            elif not has_branch:  # a fresh clone: the session branch starts where the remote has it
                self._git.create_branch(root, branch, remote_sha or sha)
        if problems:
            raise WorkspaceConfigError(problems)
        return events

    def _prepare_one(self, name: str, repo: RepoSettings) -> WorkspaceEvent:
        url = repo.remote or ""
        root = configured_path(repo, self._config_dir)
        if needs_clone(root):
            self._port(name).clone(url, root, depth=repo.clone_depth)
            event: WorkspaceEvent = RepoCloned(repo=name, url=url, path=str(root), depth=repo.clone_depth)
        else:
            self._port(name).fetch(root, url, [self._refspec(root, url)])
            event = RepoFetched(repo=name, url=url)
        if repo.clone_depth and self._lacks(root, repo.base_ref):
            # The base is older than the shallow history (an old tag or SHA): fetch the rest, once, on demand.
            self._port(name).deepen(root, url)
        return event

    def _lacks(self, root: Path, commit: str) -> bool:
        """Whether the repository at `root` is there but lacks `commit` (when git cannot tell, the setup check
        that follows reports the problem)."""
        try:
            return self._git.resolve_commit(root, commit) is None
        except GitError:
            return False

    def _refspec(self, root: Path, url: str) -> str:
        """`origin`'s tracking refs when `origin` is this URL (what a clone set up), else Orchestra's own."""
        try:
            origin = self._git.config_values(root, f"remote.{ORIGIN}.url")
        except Exception:  # not a repository: the fetch below reports it
            origin = ()
        target = f"refs/remotes/{ORIGIN}" if url in origin else _OWN_TRACKING
        return f"+refs/heads/*:{target}/*"

    def _port(self, name: str) -> GitRemotes:
        if self._remotes is None:
            raise WorkspaceConfigError(
                [(f"workspace.repos.{name}.remote", "this run has no GitRemotes port: remotes are not available")]
            )
        return self._remotes


__all__ = ["RemoteSetup"]
