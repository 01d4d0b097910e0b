"""Session branch pushes: the push policies, a background pusher that coalesces bursts, events per push."""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Mapping
from pathlib import Path

from attrs import frozen

from orchestra_core.model.settings import RepoSettings
from orchestra_core.model.workspace_events import PushFailed, RemotePushed, WorkspaceEvent
from orchestra_core.ports.git_remotes import GitRemotes, RemoteError
from orchestra_core.workspace.naming import is_protected

NEVER, ON_COMPLETION, ON_CHECKPOINT = "never", "on_completion", "on_checkpoint"


def push_policy(repo: RepoSettings) -> str:
    """The repo's push policy: as configured, else `on_completion` with a remote and `never` without."""
    if repo.push:
        return repo.push
    return ON_COMPLETION if repo.remote else NEVER


@frozen
class PushTarget:
    """Where one repo's session branch goes.

    Attributes:
        repo: The repo's name.
        root: The repository (its objects hold the commits pushed).
        url: The remote (as configured; redacted in every event).
        branch: The session branch, pushed under the same name.
        policy: `on_completion` or `on_checkpoint`.
        protected: The repo's protected branch patterns: a matching branch is never pushed.
    """

    repo: str
    root: Path
    url: str
    branch: str
    policy: str
    protected: tuple[str, ...] = ()


class SessionPusher:
    """Pushes session branches with a lease on the last pushed SHA; failures are warnings, never errors.

    `request(heads)` (after a checkpoint) hands the heads to a background thread, which pushes the latest
    ones it has when it gets to them: a burst of checkpoints is one push. `finish(heads)` waits for that
    thread, then pushes `heads` (None: only what was requested) in the caller's thread.
    """

    def __init__(
        self,
        remotes: GitRemotes,
        targets: Mapping[str, PushTarget],
        emit: Callable[[WorkspaceEvent], None],
        *,
        session_id: str = "",
        pushed: Mapping[str, str] | None = None,
        lookup: Collection[str] = (),
    ) -> None:
        """Args:
            remotes: The GitRemotes port.
            targets: Repo name -> where its branch goes (repos without a remote are left out).
            emit: Receives RemotePushed and PushFailed events.
            session_id: Put on the events.
            pushed: Repo name -> the SHA its remote branch holds now (the lease); default: the branch is new.
            lookup: Repos whose lease is unknown (a resumed session): the remote is asked before their first
                push, and asked again at the next push when it could not be reached.
        """
        self._remotes = remotes
        self._targets = dict(targets)
        self._emit = emit
        self._session_id = session_id
        self._pushed = dict(pushed or {})
        self._lookup = set(lookup)
        self._wanted: dict[str, str] = {}
        self._lock = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False

    @property
    def pushed(self) -> dict[str, str]:
        """Repo name -> the SHA last pushed (or found on the remote)."""
        with self._lock:
            return dict(self._pushed)

    def request(self, heads: Mapping[str, str]) -> None:
        """Push these heads soon, in the background (for `on_checkpoint` repos only)."""
        wanted = {repo: sha for repo, sha in heads.items() if self._policy(repo) == ON_CHECKPOINT}
        if not wanted:
            return
        with self._lock:
            if self._closed:
                return
            self._wanted.update(wanted)
            if self._thread is None:
                self._thread = threading.Thread(target=self._work, name="orchestra-pusher", daemon=True)
                self._thread.start()
            self._lock.notify_all()

    def finish(self, heads: Mapping[str, str] | None) -> None:
        """Stop the background pushes, then push what is pending and `heads` (the final state of a successful
        run, for every repo with a remote), in this thread."""
        with self._lock:
            self._closed = True
            self._lock.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join()
        with self._lock:
            pending, self._wanted = self._wanted, {}
        pending.update({repo: sha for repo, sha in (heads or {}).items() if repo in self._targets})
        for repo, sha in pending.items():
            self._push(repo, sha)

    def _policy(self, repo: str) -> str:
        target = self._targets.get(repo)
        return target.policy if target is not None else NEVER

    def _work(self) -> None:
        while True:
            with self._lock:
                while not self._wanted and not self._closed:
                    self._lock.wait()
                if self._closed:
                    return  # finish() pushes what is left
                batch, self._wanted = self._wanted, {}
            for repo, sha in batch.items():
                self._push(repo, sha)

    def _push(self, repo: str, sha: str) -> None:
        target = self._targets[repo]
        if is_protected(target.branch, list(target.protected)):
            reason = f"{target.branch} is a protected branch; Orchestra never pushes to one"
            self._failed(target, sha, reason, "protected")
            return
        try:
            if repo in self._lookup:  # a lease guessed as "" would reject every push to an existing branch
                found = self._remotes.remote_head(target.url, target.branch) or ""
                with self._lock:
                    self._pushed[repo] = found
                    self._lookup.discard(repo)
            with self._lock:
                expected = self._pushed.get(repo, "")
            if expected == sha:
                return
            self._remotes.push(target.root, target.url, sha, target.branch, expected_remote_sha=expected)
        except RemoteError as error:
            self._failed(target, sha, error.detail or str(error), error.category)
            return
        except ValueError as error:
            self._failed(target, sha, str(error), "other")
            return
        with self._lock:
            self._pushed[repo] = sha
        self._emit(
            RemotePushed(session_id=self._session_id, repo=repo, branch=target.branch, sha=sha, remote_url=target.url)
        )

    def _failed(self, target: PushTarget, sha: str, reason: str, category: str) -> None:
        self._emit(
            PushFailed(
                session_id=self._session_id, repo=target.repo, branch=target.branch, sha=sha, reason=reason,
                category=category,
            )
        )


__all__ = ["NEVER", "ON_CHECKPOINT", "ON_COMPLETION", "PushTarget", "SessionPusher", "push_policy"]
