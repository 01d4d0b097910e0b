"""Where an ACP agent's absolute paths lie among the node's repos, and the permission policy.

The agent names files by absolute path; Orchestra's tools take paths relative to a repo. A path is matched to the
repo whose worktree it lies under as text; what it names is then left to the repo's path guard (which refuses
`..`, `.git`, `.orchestra` and symbolic links leaving the worktree).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import PurePosixPath
from typing import Any

from orchestra_adapters.backends.cli_agent.streams import items, mapping
from orchestra_core.agents.repo_context import RepoContext

WRITE_KIND = "edit"
_STATE_NAMES = (".git", ".orchestra")


class OutsideWorktree(Exception):
    """A path that lies in none of the node's worktrees (or is not absolute)."""


def locate(path: Any, repos: Sequence[RepoContext]) -> tuple[RepoContext, str]:
    """The repo an absolute path lies in and the path relative to its worktree (`.` for the worktree itself).

    Raises:
        OutsideWorktree: The path is not an absolute path inside one of `repos`' worktrees.
    """
    if not isinstance(path, str) or not path.startswith("/"):
        raise OutsideWorktree(f"{path!r} is not an absolute path; ACP paths are absolute")
    given = PurePosixPath(path)
    for repo in repos:
        for root in dict.fromkeys((str(repo.root), os.path.realpath(repo.root))):
            if given.is_relative_to(root):
                return repo, str(given.relative_to(root))
    roots = ", ".join(str(repo.root) for repo in repos) or "none"
    raise OutsideWorktree(f"{path} is outside the node's worktree ({roots})")


def write_inside(tool_call: Mapping[str, Any], repos: Sequence[RepoContext]) -> str | None:
    """None when a tool call is a write (`kind: edit`) whose every location lies inside a worktree, clear of `..`
    and Orchestra's and git's state; else why not."""
    kind = str(tool_call.get("kind") or "other")
    if kind != WRITE_KIND:
        return f"a call of kind {kind!r}, neither one of Orchestra's tools nor a write inside the worktree"
    paths = [mapping(location).get("path") for location in items(tool_call.get("locations"))]
    if not paths:
        return "a write that names no file"
    for path in paths:
        try:
            _repo, relative = locate(path, repos)
        except OutsideWorktree as error:
            return str(error)
        if _leaves_or_touches_state(PurePosixPath(relative).parts):
            return f"{path} is not a file Orchestra lets agents write"
    return None


def _leaves_or_touches_state(parts: Iterable[str]) -> bool:
    return any(part == ".." or part.lower() in _STATE_NAMES for part in parts)


def read_lines(text: str, line: int | None, limit: int | None) -> str:
    """`text` from 1-based `line` (default the first), at most `limit` lines (default all)."""
    if line is None and limit is None:
        return text
    lines = text.splitlines(keepends=True)
    start = max((line or 1) - 1, 0)
    end = start + limit if limit is not None and limit >= 0 else None
    return "".join(lines[start:end])
