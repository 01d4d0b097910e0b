"""Local bare repositories as remotes (file URLs), for tests of clone, fetch and push."""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path

from tests.support.git_repos import git, make_repo


def bare_remote(path: Path, files: Mapping[str, str] | None = None) -> Path:
    """A bare repository at `path` whose `main` holds `files` (default: one README) in several commits."""
    seed = make_repo(path.with_name(path.name + ".seed"), files)
    for number in range(2):
        seed.write(f"history/{number}.txt", f"{number}\n")
        seed.commit_all(f"history {number}")
    git(path.parent, "clone", "--quiet", "--bare", str(seed.path), str(path))
    shutil.rmtree(seed.path)
    return path


def reject_pushes(bare: Path, message: str = "pushes are closed") -> None:
    """A pre-receive hook in `bare` that declines every push."""
    hook = bare / "hooks" / "pre-receive"
    hook.write_text(f"#!/bin/sh\necho '{message}' >&2\nexit 1\n", encoding="utf-8")
    hook.chmod(0o755)


def commit_file(repo: Path, relative: str, text: str) -> str:
    """Write `relative` in the checkout at `repo`, commit it, and return the new HEAD."""
    file = repo / relative
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(text, encoding="utf-8")
    git(repo, "add", "--", relative)
    git(repo, "commit", "--quiet", "-m", f"write {relative}")
    return git(repo, "rev-parse", "HEAD").strip()


def remote_branches(bare: Path) -> dict[str, str]:
    """Branch name -> SHA in the bare repository."""
    out = git(bare, "for-each-ref", "--format=%(refname:lstrip=2) %(objectname)", "refs/heads/")
    return dict(line.split(" ", 1) for line in out.splitlines() if line)
