"""What changed, as the in-memory Git reports it: status entries, diff parts and a commit's changed files."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from orchestra_core.ports.git import FileChange, StatusEntry
from orchestra_core.testing import _git_files as disk
from orchestra_core.testing._git_objects import SYMLINK_MODE, Entry, Files, ObjectStore, blob_id
from orchestra_core.testing._git_text import DiffPart


def status_entries(
    root: Path, head: Files, index: Files, read: disk.Reader, ignores: disk.IgnoreRules, untracked: bool
) -> tuple[StatusEntry, ...]:
    """`git status` of a working tree: staged and unstaged letters, exact renames, untracked files."""
    staged = {path: _letter(head.get(path), index.get(path)) for path in head.keys() | index.keys()}
    unstaged = {path: _letter(entry, _entry(read, path)) for path, entry in index.items()}
    renamed: dict[str, str] = {}
    deleted = {
        index_entry: path
        for path, letter in staged.items()
        if letter == "D" and (index_entry := head[path]) is not None
    }
    for path, letter in staged.items():
        source = deleted.pop(index[path], None) if letter == "A" else None
        if source is not None:
            renamed[path] = source
    entries = {}
    for path in staged.keys() | unstaged.keys():
        if path in renamed.values():
            continue
        index_letter = "R" if path in renamed else staged.get(path, ".")
        worktree_letter = unstaged.get(path, ".")
        if (index_letter, worktree_letter) != (".", "."):
            entries[path] = StatusEntry(path, index_letter, worktree_letter, renamed.get(path))
    listed = [entries[path] for path in sorted(entries)]  # changed paths first, then the untracked, as git
    if untracked:
        listed += [
            StatusEntry(path, "?", "?")
            for path, is_directory in sorted(disk.walk(root))
            if not is_directory and path not in index and not ignores.ignored(path, False)
        ]
    return tuple(listed)


def diff_parts(
    objects: ObjectStore,
    before: Files,
    after: Files,
    read: disk.Reader | None,
    index: Files,
    paths: Sequence[str],
) -> list[DiffPart]:
    """The changed paths between two file maps, or (with `read`) between `before` and the working tree."""
    specs = [spec.rstrip("/") for spec in paths]
    candidates = before.keys() | (index.keys() if read is not None else after.keys())
    parts: list[DiffPart] = []
    for path in sorted(candidates):
        if specs and not any(path == spec or path.startswith(f"{spec}/") for spec in specs):
            continue
        old = (before[path][0], objects.blobs[before[path][1]]) if path in before else None
        if read is None:
            new = (after[path][0], objects.blobs[after[path][1]]) if path in after else None
        else:
            try:
                new = read(path)
            except disk.NotAFileError:
                new = None
        if old != new:
            parts.append((path, old, new))
    return parts


def changed_files(before: Files, after: Files) -> tuple[FileChange, ...]:
    """The files that differ between two file maps: A added, D deleted, M modified, T type changed."""
    changes = []
    for path in sorted(before.keys() | after.keys()):
        letter = _letter(before.get(path), after.get(path))
        if letter != ".":
            changes.append(FileChange(path, letter))
    return tuple(changes)


def _entry(read: disk.Reader, path: str) -> Entry | None:
    try:
        state = read(path)
    except disk.NotAFileError:
        return None
    return (state[0], blob_id(state[1])) if state else None


def _letter(old: Entry | None, new: Entry | None) -> str:
    if old == new:
        return "."
    if old is None:
        return "A"
    if new is None:
        return "D"
    return "T" if (old[0] == SYMLINK_MODE) != (new[0] == SYMLINK_MODE) else "M"
