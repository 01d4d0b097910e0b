"""The remote side of one run: clone/fetch before it, pushes after checkpoints and at its end."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import suppress
from typing import TYPE_CHECKING

from orchestra_core.model.settings import OrchestraSettings
from orchestra_core.model.workspace_events import WorkspaceEvent, WorkspaceSnapshotRecorded
from orchestra_core.ports.git import Git
from orchestra_core.ports.git_remotes import GitRemotes
from orchestra_core.runs.start import REPLAY, RESUME, SessionStart

if TYPE_CHECKING:  # a run without remotes (most) loads none of the workspace's remote machinery
    from orchestra_core.workspace.pushes import PushTarget, SessionPusher
    from orchestra_core.workspace.remotes import RemoteSetup
    from orchestra_core.workspace.session import WorkspaceSession


class RunRemotes:
    """Clones or fetches every repo with a `remote` before the session begins (a failure is bad input:
    nothing is recorded), records those events once it has, and pushes the session branches by policy."""

    def __init__(self, settings: OrchestraSettings, git: Git | None, remotes: GitRemotes | None) -> None:
        self._repos = settings.workspace.repos
        self._setup: RemoteSetup | None = None
        if git is not None and any(repo.remote for repo in self._repos.values()):
            from orchestra_core.workspace.remotes import RemoteSetup

            self._setup = RemoteSetup(self._repos, remotes, git, settings.base_dir)
        self._remotes = remotes
        self._waiting: list[WorkspaceEvent] = []
        self._pusher: SessionPusher | None = None
        self._resumed = False

    @property
    def active(self) -> bool:
        """Whether some workspace repo has a remote."""
        return self._setup is not None and any(repo.remote for repo in self._repos.values())

    def prepare(self, start: SessionStart) -> None:
        """Clone or fetch every repo with a remote; on a resume or replay, fetch the recorded session branches
        whose commits are missing here.

        Raises:
            WorkspaceConfigError: A clone or fetch failed, or a recorded commit is nowhere to be found.
        """
        if not self.active or self._setup is None:
            return
        self._waiting = self._setup.prepare()
        if start.kind in (RESUME, REPLAY) and start.repo_heads:
            heads = {name: (head.branch, head.sha) for name, head in start.repo_heads.items()}
            self._waiting += self._setup.fetch_session(heads)
        self._resumed = start.kind == RESUME

    def attach(
        self,
        workspace: WorkspaceSession,
        session_id: str,
        emit: Callable[[WorkspaceEvent], None],
        subscribe: Callable[[Callable[[object], None]], None],
    ) -> None:
        """Record the clone/fetch events, and start pushing the workspace's session branches."""
        for event in self._waiting:
            emit(_with_session(event, session_id))
        self._waiting = []
        if self._remotes is None or not self.active:
            return
        from orchestra_core.workspace.pushes import NEVER, PushTarget, SessionPusher, push_policy

        targets = {}
        for name, context in workspace.contexts.items():
            repo = self._repos.get(name)
            if repo is None or not repo.remote or push_policy(repo) == NEVER:
                continue
            targets[name] = PushTarget(
                name, context.repo_root, repo.remote, context.branch_name, push_policy(repo), repo.protected_branches
            )
        if not targets:
            return
        pushed = self._remote_heads(targets) if self._resumed else {}
        lookup = [name for name in targets if self._resumed and name not in pushed]  # asked again at the push
        self._pusher = SessionPusher(
            self._remotes, targets, emit, session_id=session_id, pushed=pushed, lookup=lookup
        )
        subscribe(self._on_event)

    def finish(self, succeeded: bool, heads: Mapping[str, str]) -> None:
        """The run ended: push what checkpoints asked for and, when it succeeded, the final heads."""
        pusher, self._pusher = self._pusher, None
        if pusher is not None:
            pusher.finish(heads if succeeded else None)

    def close(self) -> None:
        """The run stopped without `finish` (interrupted, crashed): push what checkpoints asked for."""
        self.finish(False, {})

    def _remote_heads(self, targets: Mapping[str, PushTarget]) -> dict[str, str]:
        """What the remotes hold now, as the lease of the first push of a resumed session (a remote that
        cannot be reached now is left out: the pusher asks it before that push)."""
        assert self._remotes is not None
        heads = {}
        for name, target in targets.items():
            with suppress(Exception):
                heads[name] = self._remotes.remote_head(target.url, target.branch) or ""
        return heads

    def _on_event(self, event: object) -> None:
        pusher = self._pusher
        if pusher is not None and isinstance(event, WorkspaceSnapshotRecorded) and event.snapshot is not None:
            pusher.request(event.heads)


def _with_session(event: WorkspaceEvent, session_id: str) -> WorkspaceEvent:
    from attrs import evolve

    return evolve(event, session_id=session_id)


__all__ = ["RunRemotes"]
