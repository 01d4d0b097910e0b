"""The in-memory Git's working trees: real files on disk, read and written as git would, and ignore rules."""

from __future__ import annotations

import os
import re
import shutil
import stat
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from attrs import frozen

from orchestra_core.testing._git_objects import EXECUTABLE_MODE, FILE_MODE, SYMLINK_MODE, ObjectStore

FileState = tuple[str, bytes]
"""A file as git sees it: (mode, content); a symbolic link's content is its target."""

Reader = Callable[[str], FileState | None]
"""Reads one path of a working tree (see `read_file`)."""


class NotAFileError(Exception):
    """The path is a directory (or something git does not store) in the working tree."""


def read_file(root: Path, path: str, *, trust_mode: bool, known_mode: str | None = None) -> FileState | None:
    """The file at `path` below `root`, or None when git would not see one there (missing, or beyond a
    symbolic link). Without `trust_mode` (core.fileMode false) the executable bit keeps `known_mode`.

    Raises:
        NotAFileError: `path` is a directory or a special file.
    """
    parent = root
    for part in path.split("/")[:-1]:
        parent = parent / part
        if parent.is_symlink() or not parent.is_dir():
            return None
    try:
        info = (root / path).lstat()
    except (FileNotFoundError, NotADirectoryError):
        return None
    if stat.S_ISLNK(info.st_mode):
        return SYMLINK_MODE, os.fsencode(os.readlink(root / path))
    if not stat.S_ISREG(info.st_mode):
        raise NotAFileError(path)
    if not trust_mode and known_mode in (FILE_MODE, EXECUTABLE_MODE):
        mode = known_mode
    else:
        mode = EXECUTABLE_MODE if trust_mode and info.st_mode & stat.S_IXUSR else FILE_MODE
    return mode, (root / path).read_bytes()


def walk(root: Path) -> Iterator[tuple[str, bool]]:
    """(path, is_directory) of everything below `root` but `.git` and nested repositories, parents first."""
    for directory, subdirectories, files in os.walk(root):
        relative = Path(directory).relative_to(root).as_posix()
        prefix = "" if relative == "." else f"{relative}/"
        for name in sorted(subdirectories):
            if name == ".git" or (Path(directory) / name / ".git").exists():
                subdirectories.remove(name)
                if name != ".git":
                    yield f"{prefix}{name}", False  # a nested repository counts as one untracked entry
            elif (Path(directory) / name).is_symlink():
                yield f"{prefix}{name}", False
            else:
                yield f"{prefix}{name}", True
        for name in sorted(files):
            if name != ".git":
                yield f"{prefix}{name}", False


def write_file(root: Path, path: str, mode: str, data: bytes) -> None:
    """Put a file (or symbolic link) in the working tree, replacing whatever is in its way."""
    target = root / path
    parent = root
    for part in path.split("/")[:-1]:
        parent = parent / part
        if parent.is_symlink() or (parent.exists() and not parent.is_dir()):
            parent.unlink()
        parent.mkdir(exist_ok=True)
    remove(root, path)
    if mode == SYMLINK_MODE:
        os.symlink(os.fsdecode(data), target)
        return
    target.write_bytes(data)
    target.chmod(0o755 if mode == EXECUTABLE_MODE else 0o644)


def remove(root: Path, path: str) -> None:
    """Delete a file, link or directory of the working tree (no error when absent)."""
    target = root / path
    if target.is_dir() and not target.is_symlink():
        shutil.rmtree(target)
    elif os.path.lexists(target):
        target.unlink()


def remove_empty_directories(root: Path, keep: Sequence[str] = ()) -> None:
    """Remove directories left empty below `root` (deepest first), except `.git` and `keep`."""
    for directory, _, _ in sorted(os.walk(root), key=lambda item: len(item[0]), reverse=True):
        path = Path(directory)
        relative = path.relative_to(root).as_posix()
        inside_git = ".git" in path.relative_to(root).parts
        if path != root and not inside_git and relative not in keep and not any(path.iterdir()):
            path.rmdir()


def checkout_files(root: Path, store: ObjectStore, files: dict[str, tuple[str, str]]) -> None:
    """Write every file of a flattened tree into the working tree."""
    for path, (mode, oid) in sorted(files.items()):
        write_file(root, path, mode, store.blobs[oid])


@frozen
class _Pattern:
    base: str
    regex: re.Pattern[str]
    negated: bool
    directory_only: bool


class IgnoreRules:
    """gitignore(5) for one working tree: `info/exclude`, then every `.gitignore` from the top down; the
    last matching pattern decides, and nothing below an ignored directory comes back."""

    def __init__(self, root: Path, excludes: Sequence[str], *, per_directory: bool = True) -> None:
        self._root = root
        self._excludes = [p for line in excludes if (p := _compile("", line)) is not None]
        self._files: dict[str, list[_Pattern]] = {}
        self._per_directory = per_directory  # False: `excludes` alone (ls-files --exclude-from)

    def ignored(self, path: str, is_directory: bool) -> bool:
        parts = path.split("/")
        for depth in range(1, len(parts)):
            if self._matches("/".join(parts[:depth]), True):
                return True
        return self._matches(path, is_directory)

    def _matches(self, path: str, is_directory: bool) -> bool:
        parts = path.split("/")
        patterns = list(self._excludes)
        for depth in range(len(parts)):
            patterns += self._gitignore("/".join(parts[:depth]))
        verdict = False
        for pattern in patterns:
            if pattern.directory_only and not is_directory:
                continue
            relative = path[len(pattern.base) + 1 :] if pattern.base else path
            if pattern.regex.fullmatch(relative):
                verdict = not pattern.negated
        return verdict

    def _gitignore(self, directory: str) -> list[_Pattern]:
        if not self._per_directory:
            return []
        if directory not in self._files:
            file = self._root / directory / ".gitignore"
            try:
                lines = file.read_text(encoding="utf-8", errors="surrogateescape").splitlines()
            except OSError:
                lines = []
            self._files[directory] = [p for line in lines if (p := _compile(directory, line)) is not None]
        return self._files[directory]


def _compile(base: str, line: str) -> _Pattern | None:
    text = re.sub(r"(?<!\\)\s+$", "", line)
    if not text or text.startswith("#"):
        return None
    negated = text.startswith("!")
    text = text[1:] if negated else text.removeprefix("\\")
    directory_only = text.endswith("/")
    text = text.rstrip("/")
    anchored = "/" in text
    text = text.lstrip("/")
    regex = _glob(text)
    return _Pattern(
        base, re.compile(regex if anchored else f"(?:.*/)?{regex}", re.DOTALL), negated, directory_only
    )


def _glob(pattern: str) -> str:
    out: list[str] = []
    index = 0
    while index < len(pattern):
        if pattern.startswith("**/", index) and (index == 0 or pattern[index - 1] == "/"):
            out.append("(?:.*/)?")
            index += 3
        elif (
            pattern.startswith("**", index)
            and index + 2 == len(pattern)
            and (index == 0 or pattern[index - 1] == "/")
        ):
            out.append(".*")
            index += 2
        elif pattern[index] == "*":
            out.append("[^/]*")
            index += 1
        elif pattern[index] == "?":
            out.append("[^/]")
            index += 1
        elif pattern[index] == "[" and "]" in pattern[index + 2 :]:
            end = pattern.index("]", index + 2)
            body = pattern[index + 1 : end]
            out.append("[" + ("^" + body[1:] if body[:1] == "!" else body).replace("\\", "\\\\") + "]")
            index = end + 1
        elif pattern[index] == "\\" and index + 1 < len(pattern):
            out.append(re.escape(pattern[index + 1]))
            index += 2
        else:
            out.append(re.escape(pattern[index]))
            index += 1
    return "".join(out)
