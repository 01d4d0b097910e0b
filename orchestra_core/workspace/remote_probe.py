"""A workspace repo not cloned yet: whether its remote answers, and what its `base_ref` will name once cloned.

Session start clones a repo whose `path` is missing (or an empty directory) from its `remote` (see `remotes`);
until then the repo can only be judged by what the remote advertises (`git ls-remote`), which is what
`orchestra doctor` does on a fleet worker or CI machine that has not cloned yet.
"""

from __future__ import annotations

import re
from pathlib import Path

from attrs import frozen

from orchestra_core.model.remote_urls import redact_url
from orchestra_core.model.settings import RepoSettings
from orchestra_core.ports.git_remotes import GitRemotes, RemoteError, RemoteRefs
from orchestra_core.workspace.errors import WorkspaceConfigError

ORIGIN = "origin"
UNCHECKED = ""  # base_after_clone: a commit id the remote does not advertise; only the clone can tell
_SUFFIX = re.compile(r"[~^:]|@\{")  # `main~2`, `v1^{commit}`, `main@{1}`: the ref is the part before
_COMMIT_ID = re.compile(r"[0-9a-f]{4,64}")
_SHOWN = 5


def needs_clone(root: Path) -> bool:
    """Whether session start clones the repo at `root` from its remote: the path does not exist, or is an
    empty directory."""
    return not root.exists() or (root.is_dir() and not any(root.iterdir()))


def cloned_refs(remote: RemoteRefs) -> dict[str, str]:
    """The refs a fresh clone of `remote` has, and their commits: `HEAD` and the default branch (what the remote's
    HEAD names), `refs/remotes/origin/*` for every branch, and the tags."""
    refs = {f"refs/remotes/{ORIGIN}/{ref.removeprefix('refs/heads/')}": sha
            for ref, sha in remote.refs.items() if ref.startswith("refs/heads/")}  # fmt: skip
    refs.update({ref: sha for ref, sha in remote.refs.items() if ref.startswith("refs/tags/")})
    if remote.head_sha:
        refs["HEAD"] = remote.head_sha
        refs[f"refs/remotes/{ORIGIN}/HEAD"] = remote.head_sha
        if remote.head_branch:
            refs[f"refs/heads/{remote.head_branch}"] = remote.head_sha
    return refs


def base_after_clone(base_ref: str, remote: RemoteRefs) -> str | None:
    """The commit `base_ref` will name in a fresh clone of `remote`, found as `git rev-parse` finds it (the name
    itself, then under `refs/`, `refs/tags/`, `refs/heads/`, `refs/remotes/`); None when it will name none.

    `UNCHECKED` when only the clone can tell: a commit id the remote does not advertise, or a revision relative
    to a ref it has (`main~2`).
    """
    name = _SUFFIX.split(base_ref, maxsplit=1)[0]
    refs = cloned_refs(remote)
    for candidate in (name, f"refs/{name}", f"refs/tags/{name}", f"refs/heads/{name}", f"refs/remotes/{name}",
                      f"refs/remotes/{name}/HEAD"):  # fmt: skip
        if candidate in refs:
            return refs[candidate] if name == base_ref else UNCHECKED
    if _COMMIT_ID.fullmatch(name):
        tips = {sha for sha in refs.values() if sha.startswith(name)}
        return tips.pop() if len(tips) == 1 and name == base_ref else UNCHECKED
    return None


@frozen
class PlannedClone:
    """A repo session start will clone: from where, how deep, and the base its session branches will start at.

    Attributes:
        name: The repo's name in `workspace.repos`.
        path: Where it will be cloned.
        url: The remote's URL, redacted.
        depth: The shallow clone's depth (None: full history).
        base_sha: The commit `base_ref` names on the remote now (`UNCHECKED`: only the clone can tell).
        default_branch: The branch the remote's HEAD names (None when detached).
    """

    name: str
    path: Path
    url: str
    depth: int | None
    base_sha: str
    default_branch: str | None


def plan_clone(name: str, settings: RepoSettings, path: Path, remotes: GitRemotes) -> PlannedClone:
    """Ask the remote of a repo not cloned yet what it has (nothing is fetched or created).

    Raises:
        WorkspaceConfigError: The remote cannot be reached (under the `remote` key, its URL redacted), or
            `base_ref` will name no commit in the clone (under `base_ref`, with what the remote has).
    """
    key = f"workspace.repos.{name}"
    url = settings.remote or ""
    shown = redact_url(url)
    try:
        remote = remotes.remote_refs(url)
    except (RemoteError, ValueError) as error:
        raise WorkspaceConfigError(
            [(f"{key}.remote", f"{path} is not cloned yet and its remote {shown} cannot be reached: {error}")]
        ) from error
    base = base_after_clone(settings.base_ref, remote)
    if base is None:
        raise WorkspaceConfigError([(f"{key}.base_ref", _missing_base(settings.base_ref, remote, shown))])
    return PlannedClone(name, path, shown, settings.clone_depth, base, remote.head_branch)


def _missing_base(base_ref: str, remote: RemoteRefs, url: str) -> str:
    """Why `base_ref` names nothing in the clone, and what to write instead."""
    if not remote.refs and not remote.head_sha:
        return f"the remote {url} has no commits yet: push a first commit"
    if base_ref == "HEAD":
        return f"the remote {url}'s HEAD names no commit; set base_ref to one of its {_listing(remote)}"
    if f"refs/heads/{base_ref}" in remote.refs:
        return (
            f"{base_ref!r} is a branch of the remote {url} but not its default branch, so a clone has it as "
            f"{ORIGIN}/{base_ref}; set base_ref: {ORIGIN}/{base_ref}"
        )
    return f"{base_ref!r} will not name a commit in the clone of {url}, which has {_listing(remote)}"


def _listing(remote: RemoteRefs) -> str:
    parts = []
    for what, names in (("branches", [f"{ORIGIN}/{b}" for b in remote.branches()]), ("tags", remote.tags())):
        if names:
            more = f" and {len(names) - _SHOWN} more" if len(names) > _SHOWN else ""
            parts.append(f"{what} {', '.join(names[:_SHOWN])}{more}")
    return "; ".join(parts) or "no branches or tags"


__all__ = ["ORIGIN", "UNCHECKED", "PlannedClone", "base_after_clone", "cloned_refs", "needs_clone", "plan_clone"]
