"""Listing a lazy worktree: the files on disk together with the tracked files not written out, in the order
and by the rules of `PathGuard.walk` on a full checkout."""

from __future__ import annotations

import functools
import os
import stat
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Protocol

from orchestra_core.agents.git_names import is_dotgit, is_gitattributes, is_gitmodules, is_state_dir
from orchestra_core.agents.guarded_path import GuardedPath, ToolPathError
from orchestra_core.ports.tree_files import TreeEntry, TreeFiles


class PathGuard(Protocol):
    """What of `path_guard.PathGuard` the walk uses."""

    root: Path
    protected: tuple[Path, ...]

    def resolve(self, path: str) -> GuardedPath: ...

    def stat_of(self, guarded: GuardedPath) -> os.stat_result | None: ...

    def walk_disk(self, start: GuardedPath, path: str) -> Iterator[GuardedPath]: ...

    def on_disk_ancestor_is_file(self, guarded: GuardedPath) -> bool: ...


def walk_with_tree(guard: PathGuard, tree: TreeFiles, start: GuardedPath, path: str) -> Iterator[GuardedPath]:
    """Every regular file at or below `start` (already resolved from `path`), on disk or in `tree`.

    Raises:
        FileNotFoundError: Nothing is there, on disk or in the tree.
    """
    info = guard.stat_of(start)
    if info is not None and not stat.S_ISDIR(info.st_mode):
        yield from guard.walk_disk(start, path)
        return
    if info is None:
        entry = tree.entry(start.text)
        if entry is not None:
            if entry.is_file and not guard.on_disk_ancestor_is_file(start):
                yield start
            return
        if not tree.is_directory(start.text) or guard.on_disk_ancestor_is_file(start):
            raise FileNotFoundError(path)
    found = [file.text for file in guard.walk_disk(start, path)] if info is not None else []
    on_disk = _DiskNames(guard.root, start) if info is not None else None
    for entry in tree.entries_under(start.text):
        if (on_disk is None or not on_disk.shadows(entry.path)) and _listed(guard, tree, entry):
            found.append(entry.path)
    found.sort(key=_walk_order)
    for text in found:  # made as they are taken: a listing stops early
        yield GuardedPath(guard.root, PurePosixPath(text))


def _listed(guard: PathGuard, tree: TreeFiles, entry: TreeEntry) -> bool:
    """Whether a full checkout's walk would list this entry: a file (or a link to one inside the repo) whose
    path a tool may use."""
    parts = entry.path.split("/")
    if any(_refused(part, directory=depth < len(parts) - 1) for depth, part in enumerate(parts)):
        return False
    if guard.protected and any(
        Path(guard.root, entry.path).is_relative_to(protected) for protected in guard.protected
    ):
        return False
    if entry.is_file:
        return True
    if not entry.is_symlink:
        return False
    try:
        target = guard.resolve(entry.path)
    except ToolPathError:
        return False  # a link out of the repo (or into .git) is not the repo's content
    info = guard.stat_of(target)
    if info is not None:
        return stat.S_ISREG(info.st_mode)
    resolved = tree.entry(target.text)
    return resolved is not None and resolved.is_file


def _refused(part: str, *, directory: bool) -> bool:
    if part.isascii() and part[:1] != "." and "~" not in part and "\n" not in part and "\r" not in part:
        return False  # the usual name: no spelling of .git, .orchestra, .gitmodules or .gitattributes is like it
    return _refused_name(part, directory)


@functools.lru_cache(maxsize=4096)
def _refused_name(part: str, directory: bool) -> bool:
    if "\n" in part or "\r" in part or is_dotgit(part) or is_state_dir(part):
        return True
    return directory and (is_gitmodules(part) or is_gitattributes(part))


class _DiskNames:
    """What exists on disk below a directory: each directory listed, and every name in it."""

    def __init__(self, root: Path, start: GuardedPath) -> None:
        self._directories: set[str] = set()
        self._names: set[str] = set()
        for directory, subdirectories, files in os.walk(start.absolute, followlinks=False):
            relative = Path(directory).relative_to(root).as_posix()
            prefix = "" if relative == "." else f"{relative}/"
            self._directories.add(relative if prefix else "")
            self._names.update(f"{prefix}{name}" for name in (*subdirectories, *files))
            subdirectories[:] = [d for d in subdirectories if not is_dotgit(d) and not is_state_dir(d)]
        self._not_directories = self._names - self._directories

    def shadows(self, path: str) -> bool:
        """Whether something on disk stands at `path`, or a parent of it is on disk but not as a directory."""
        parent = path.rsplit("/", 1)[0] if "/" in path else ""
        if parent in self._directories:
            return path in self._names
        if not self._not_directories:
            return False
        parts = path.split("/")
        return any("/".join(parts[:depth]) in self._names and "/".join(parts[:depth]) not in self._directories
                   for depth in range(1, len(parts)))  # fmt: skip


def _walk_order(text: str) -> tuple[tuple[int, str], ...]:
    """`os.walk`'s top-down order with sorted names: a directory's files before its subdirectories."""
    parts = text.split("/")
    return (*((1, part) for part in parts[:-1]), (0, parts[-1]))
