"""A worktree's index set from its files or from captured versions, and `git commit` of captured versions."""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from orchestra_adapters.git.command import GitCommand, encode
from orchestra_core.model.turn import FileVersion


def update_index(
    git: GitCommand,
    worktree: Path,
    paths: Sequence[str],
    versions: Mapping[str, FileVersion],
    env: Mapping[str, str] | None = None,
) -> None:
    """Each path's index entry from its file (added, updated or removed), or from its captured version."""
    listed = list(dict.fromkeys(paths))
    read = [path for path in listed if path not in versions]
    stored = [path for path in listed if path in versions and not versions[path].deleted]
    removed = [path for path in listed if path in versions and versions[path].deleted]
    for options, names in ((["--add", "--remove"], read), (["--force-remove"], removed)):
        if names:
            stdin = b"".join(encode(name) + b"\0" for name in names)
            git.run(worktree, ["update-index", *options, "-z", "--stdin"], stdin=stdin, env=env, work_tree=True)
    if stored:
        info = b"".join(encode(f"{versions[p].mode} {versions[p].blob}\t{p}") + b"\0" for p in stored)
        git.run(worktree, ["update-index", "-z", "--index-info"], stdin=info, env=env, objects_only=True)


def commit_with_versions(
    git: GitCommand,
    worktree: Path,
    args: Sequence[str],
    message: str,
    identity: Mapping[str, str],
    paths: Sequence[str],
    run_hooks: bool,
    versions: Mapping[str, FileVersion],
) -> str:
    """`git commit` (`args`) of HEAD plus `paths`, captured ones as `versions` hold them, through a temporary index
    as `git commit --only` does: what else the worktree's index holds stays out of the commit; the worktree's own
    index then holds the committed entries. Returns the new HEAD."""
    everything = [*paths, *versions]
    with tempfile.TemporaryDirectory(prefix="orchestra-index-") as scratch:
        index = {"GIT_INDEX_FILE": str(Path(scratch) / "index")}
        git.run(worktree, ["read-tree", "HEAD"], env=index)
        update_index(git, worktree, everything, versions, env=index)
        git.run(worktree, args, stdin=encode(message), env={**identity, **index}, hooks=run_hooks, work_tree=True)
    update_index(git, worktree, everything, versions)
    return git.text(worktree, ["rev-parse", "HEAD"])
