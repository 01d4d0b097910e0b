"""GitRemotes port: clone, fetch and push against a repository's remote, with failures classified."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

from attrs import field, frozen

from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.immutable import frozen_map
from orchestra_core.model.remote_urls import redact_text, redact_url

RemoteFailure = Literal["auth", "network", "rejected", "not_found", "other"]
REMOTE_FAILURES: tuple[str, ...] = ("auth", "network", "rejected", "not_found", "other")


class RemoteError(OrchestraError):
    """A clone, fetch or push failed.

    Attributes:
        category: `auth`, `network`, `rejected`, `not_found` or `other` (see `classify_remote_failure`).
        url: The remote's URL, redacted.
        detail: git's message, redacted.
    """

    def __init__(self, operation: str, url: str, detail: str, category: RemoteFailure) -> None:
        self.category: RemoteFailure = category
        self.url = redact_url(url)
        self.detail = redact_text(detail.strip(), url)
        summary = self.detail.splitlines()[-1] if self.detail else category
        super().__init__(f"git {operation} {self.url} failed ({category}): {summary}")


# Checked in this order: a rejected push also prints "failed to push", an auth failure may say "not found".
_PATTERNS: tuple[tuple[RemoteFailure, re.Pattern[str]], ...] = (
    ("auth", re.compile(
        r"authentication failed|permission denied|could not read (username|password)|terminal prompts disabled"
        r"|invalid username or password|returned error: 40[13]|access denied|host key verification failed",
        re.I,
    )),
    ("rejected", re.compile(
        r"\[rejected\]|\[remote rejected\]|stale info|non-fast-forward|pre-receive hook declined"
        r"|protected branch|failed to update ref|\(fetch first\)",
        re.I,
    )),
    ("not_found", re.compile(
        r"does not appear to be a git repository|repository '.*' not found|not found|no such file or directory"
        r"|couldn't find remote ref|remote ref does not exist|returned error: 404",
        re.I,
    )),
    ("network", re.compile(
        r"could not resolve host|connection (refused|timed out|reset)|timed out|network is unreachable"
        r"|unable to access|early eof|the remote end hung up|ssl|tls|proxy|no route to host",
        re.I,
    )),
)


def classify_remote_failure(stderr: str) -> RemoteFailure:
    """The category of a failed remote git call, from what git printed on standard error.

    `auth`: credentials missing or refused; `rejected`: the remote refused a push (hook, protection, lease);
    `not_found`: no repository or ref at that URL; `network`: the host could not be reached or the connection
    broke (also a timeout); `other`: anything else.
    """
    for category, pattern in _PATTERNS:
        if pattern.search(stderr):
            return category
    return "other"


def check_remote_argument(value: str, what: str) -> str:
    """`value` unchanged, or ValueError when git could read it as an option (it starts with `-`) or it is empty.

    Raises:
        ValueError: The URL or ref is empty or starts with `-`.
    """
    if not value or value.startswith("-"):
        raise ValueError(f"{what} {redact_url(value)!r} is not allowed: it is empty or starts with '-'")
    return value


@frozen
class RemoteRefs:
    """What a remote advertises (`git ls-remote`), before anything is fetched from it.

    Attributes:
        refs: Full ref name (`refs/heads/main`, `refs/tags/v1`) -> the commit it names (an annotated tag peeled to
            its commit).
        head_branch: The branch the remote's HEAD names (`main`), None when HEAD is detached or names no commit.
        head_sha: The commit the remote's HEAD names, None when it names none (an empty repository).
    """

    refs: Mapping[str, str] = field(factory=dict, converter=frozen_map)
    head_branch: str | None = None
    head_sha: str | None = None

    def branches(self) -> list[str]:
        """The remote's branch names, sorted."""
        return sorted(ref.removeprefix("refs/heads/") for ref in self.refs if ref.startswith("refs/heads/"))

    def tags(self) -> list[str]:
        """The remote's tag names, sorted."""
        return sorted(ref.removeprefix("refs/tags/") for ref in self.refs if ref.startswith("refs/tags/"))


@runtime_checkable
class GitRemotes(Protocol):
    """Network-facing git: everything that talks to a remote. Local operations stay in the Git port.

    URLs are passed as given (credentials in them are allowed) and redacted in every error; a URL or a
    branch starting with `-` is refused with ValueError. No call ever waits for a prompt: a missing credential
    is a RemoteError of category `auth`. Every failure is a RemoteError with its category.
    """

    def clone(self, url: str, path: Path, *, depth: int | None = None) -> None:
        """Clone `url` into `path` (which must not exist or be empty), checking out the remote's default branch.

        `depth` makes a shallow clone of that many commits (None: full history).
        """
        ...

    def fetch(self, repo: Path, url: str, refspecs: Sequence[str]) -> None:
        """Fetch `refspecs` (e.g. `+refs/heads/*:refs/remotes/origin/*`) from `url` into `repo`."""
        ...

    def fetch_branch(self, repo: Path, url: str, branch: str) -> str | None:
        """Fetch the remote's `branch` into `repo` (as `refs/remotes/orchestra/<branch>`) and return its SHA;
        None when the remote has no such branch."""
        ...

    def push(self, repo: Path, url: str, local_sha: str, branch: str, *, expected_remote_sha: str) -> None:
        """Make the remote's `branch` hold `local_sha` (a commit in `repo`), forcing only with a lease: the
        push is rejected unless the remote branch holds `expected_remote_sha` (`""`: it must not exist)."""
        ...

    def deepen(self, repo: Path, url: str, *, depth: int | None = None) -> None:
        """Fetch more history into a shallow `repo`: `depth` more commits, or all of it (None: unshallow).
        A repo that is not shallow is left as it is."""
        ...

    def remote_head(self, url: str, branch: str) -> str | None:
        """The SHA the remote's `branch` holds, None when it has no such branch."""
        ...

    def remote_refs(self, url: str) -> RemoteRefs:
        """Everything the remote advertises: its branches and tags, and what its HEAD names (nothing is
        fetched; `orchestra doctor` asks this of a repo not cloned yet)."""
        ...


__all__ = [
    "REMOTE_FAILURES",
    "GitRemotes",
    "RemoteError",
    "RemoteFailure",
    "RemoteRefs",
    "check_remote_argument",
    "classify_remote_failure",
]
