"""InMemoryGitRemotes: the GitRemotes port without git or a network; remotes and clones are dicts."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

from attrs import define, field

from orchestra_core.ports.git_remotes import RemoteError, RemoteFailure, RemoteRefs, check_remote_argument


@define
class _Repo:
    branches: dict[str, str] = field(factory=dict)
    commits: set[str] = field(factory=set)
    shallow: bool = False
    tags: dict[str, str] = field(factory=dict)


class InMemoryGitRemotes:
    """Remotes registered with `add_remote`, clones made by `clone` (a real, empty directory marks each).

    A clone knows the remote's commits; `commit(repo)` makes a new one there (as an agent's commit would).
    `fail(url, category)` makes every later call to that URL fail; `reject_pushes(url)` only pushes.
    """

    def __init__(self) -> None:
        self._remotes: dict[str, _Repo] = {}
        self._clones: dict[Path, _Repo] = {}
        self._failing: dict[str, RemoteFailure] = {}
        self._rejecting: set[str] = set()
        self._lock = threading.Lock()
        self._counter = 0

    # --- arranging -----------------------------------------------------------------------------------
    def add_remote(
        self, url: str, branches: Mapping[str, str] | None = None, tags: Mapping[str, str] | None = None
    ) -> str:
        """A remote at `url` whose branches (default: `main` at a new commit) and tags hold the given SHAs; its
        URL. Its HEAD names `main` when it has one, else its first branch."""
        heads = dict(branches) if branches is not None else {"main": self._new_sha()}
        marks = dict(tags or {})
        self._remotes[url] = _Repo(heads, {*heads.values(), *marks.values()}, tags=marks)
        return url

    def commit(self, repo: Path) -> str:
        """A new commit in the clone at `repo`; its SHA."""
        sha = self._new_sha()
        self._clone(repo).commits.add(sha)
        return sha

    def fail(self, url: str, category: RemoteFailure) -> None:
        """Every later call to `url` fails with `category`."""
        self._failing[url] = category

    def heal(self, url: str) -> None:
        """Calls to `url` work again (undoes `fail` and `reject_pushes`)."""
        self._failing.pop(url, None)
        self._rejecting.discard(url)

    def reject_pushes(self, url: str) -> None:
        """Pushes to `url` are declined, as a pre-receive hook would."""
        self._rejecting.add(url)

    def branches(self, url: str) -> dict[str, str]:
        """The remote's branches and their SHAs."""
        return dict(self._remote(url, "ls-remote").branches)

    def is_shallow(self, repo: Path) -> bool:
        """Whether the clone at `repo` is shallow."""
        return self._clone(repo).shallow

    # --- the port ------------------------------------------------------------------------------------
    def clone(self, url: str, path: Path, *, depth: int | None = None) -> None:
        check_remote_argument(url, "remote URL")
        with self._lock:
            remote = self._remote(url, "clone")
            target = Path(path).resolve()
            if target.exists() and any(target.iterdir()):
                raise RemoteError("clone", url, f"destination path '{path}' already exists and is not empty", "other")
            target.mkdir(parents=True, exist_ok=True)
            self._clones[target] = _Repo(dict(remote.branches), set(remote.commits), shallow=bool(depth))

    def fetch(self, repo: Path, url: str, refspecs: Sequence[str]) -> None:
        check_remote_argument(url, "remote URL")
        for refspec in refspecs:
            check_remote_argument(refspec.lstrip("+"), "refspec")
        with self._lock:
            self._clone(repo).commits.update(self._remote(url, "fetch").commits)

    def fetch_branch(self, repo: Path, url: str, branch: str) -> str | None:
        check_remote_argument(branch, "branch")
        with self._lock:
            remote = self._remote(url, "fetch")
            sha = remote.branches.get(branch)
            if sha is not None:
                self._clone(repo).commits.update(remote.commits)
            return sha

    def push(self, repo: Path, url: str, local_sha: str, branch: str, *, expected_remote_sha: str) -> None:
        check_remote_argument(url, "remote URL")
        check_remote_argument(branch, "branch")
        check_remote_argument(local_sha, "commit")
        with self._lock:
            remote = self._remote(url, "push")
            local = self._clone(repo)
            if local_sha not in local.commits:
                raise RemoteError("push", url, f"src refspec {local_sha} does not match any", "other")
            if url in self._rejecting:
                raise RemoteError("push", url, f"! [remote rejected] {branch} (pre-receive hook declined)", "rejected")
            if remote.branches.get(branch, "") != expected_remote_sha:
                raise RemoteError("push", url, f"! [rejected] {branch} (stale info)", "rejected")
            remote.branches[branch] = local_sha
            remote.commits |= local.commits

    def deepen(self, repo: Path, url: str, *, depth: int | None = None) -> None:
        check_remote_argument(url, "remote URL")
        with self._lock:
            self._remote(url, "fetch")
            if depth is None:
                self._clone(repo).shallow = False

    def remote_head(self, url: str, branch: str) -> str | None:
        check_remote_argument(url, "remote URL")
        check_remote_argument(branch, "branch")
        return self._remote(url, "ls-remote").branches.get(branch)

    def remote_refs(self, url: str) -> RemoteRefs:
        check_remote_argument(url, "remote URL")
        remote = self._remote(url, "ls-remote")
        refs = {f"refs/heads/{name}": sha for name, sha in remote.branches.items()}
        refs.update({f"refs/tags/{name}": sha for name, sha in remote.tags.items()})
        head = "main" if "main" in remote.branches else next(iter(remote.branches), None)
        return RemoteRefs(refs, head, remote.branches.get(head) if head else None)

    # --- internals -----------------------------------------------------------------------------------
    def _remote(self, url: str, operation: str) -> _Repo:
        if url in self._failing:
            raise RemoteError(operation, url, f"simulated {self._failing[url]} failure", self._failing[url])
        try:
            return self._remotes[url]
        except KeyError:
            raise RemoteError(operation, url, f"repository '{url}' does not exist", "not_found") from None

    def _clone(self, repo: Path) -> _Repo:
        try:
            return self._clones[Path(repo).resolve()]
        except KeyError:
            raise RemoteError("fetch", str(repo), f"'{repo}' is not a git repository", "other") from None

    def _new_sha(self) -> str:
        self._counter += 1
        return hashlib.sha1(f"fake-commit-{id(self)}-{self._counter}".encode()).hexdigest()


__all__ = ["InMemoryGitRemotes"]
