"""The built-in per-repo tools: read-file, write-file, edit-file, search-code, list-files.

Every path goes through the repo's PathGuard (orchestra_core/agents/path_guard.py): `..`, absolute paths,
anything git treats as `.git`, Orchestra's `.orchestra/` and symlinks that leave the repo are refused, and
files are opened without following a symlink swapped in meanwhile. Output is bounded so one call cannot
flood the model's context.
"""

from __future__ import annotations

import fnmatch
import io
import itertools
import re
from collections.abc import Iterable, Iterator
from typing import BinaryIO

from orchestra_core.agents.git_files import check_git_file
from orchestra_core.agents.path_guard import GuardedPath, ToolPathError
from orchestra_core.agents.registry import ToolRegistry
from orchestra_core.agents.repo_context import RepoContext
from orchestra_core.agents.tools import AgentTool, WriteTracker
from orchestra_core.model.errors import OrchestraError

MAX_READ_BYTES = 256 * 1024
MAX_SEARCH_FILE_BYTES = 2 * 1024 * 1024
MAX_RESULTS = 500
MAX_LINE_CHARS = 300
BUILTIN_TOOL_NAMES = ("read-file", "write-file", "edit-file", "search-code", "list-files")


class ToolUsageError(OrchestraError):
    """A tool was called in a way it cannot honour (missing file, ambiguous edit, bad pattern)."""


def read_file(repo: RepoContext, path: str, start_line: int | None = None, end_line: int | None = None) -> str:
    """Read a text file from the repo, whole or a range of lines.

    Args:
        path: File path relative to the repo root.
        start_line: First line to return (1-based); default the first.
        end_line: Last line to return (inclusive); default the last.
    """
    with _open_existing(repo, path) as handle:
        head = handle.read(8192)
        if b"\x00" in head:
            raise ToolUsageError(f"{path} is a binary file ({_size(handle)} bytes)")
        handle.seek(0)
        if start_line is None and end_line is None:
            return _read_whole(handle, path)
        return _read_lines(handle, path, start_line or 1, end_line)


def write_file(repo: RepoContext, tracker: WriteTracker, path: str, content: str) -> str:
    """Create or overwrite a file in the repo with the given content (parent directories are created).

    Args:
        path: File path relative to the repo root.
        content: The complete new content of the file.
    """
    data = content.encode("utf-8")
    _write(repo, tracker, path, data)
    return f"Wrote {len(data)} bytes to {path}"


def edit_file(
    repo: RepoContext, tracker: WriteTracker, path: str, old_text: str, new_text: str, replace_all: bool = False
) -> str:
    """Replace an exact piece of text in a file; it must occur exactly once unless replace_all is true.

    Args:
        path: File path relative to the repo root.
        old_text: The text to replace, exactly as in the file (whitespace and indentation included).
        new_text: The replacement text.
        replace_all: Replace every occurrence instead of requiring a unique one.
    """
    if not old_text:
        raise ToolUsageError("old_text must not be empty (use write-file to create or overwrite a file)")
    with _open_existing(repo, path) as handle:
        raw = handle.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolUsageError(f"{path} is not UTF-8 text; edit-file only edits text files") from None
    count = text.count(old_text)
    if count == 0:
        raise ToolUsageError(f"old_text was not found in {path}; it must match the file exactly, whitespace included")
    if count > 1 and not replace_all:
        raise ToolUsageError(
            f"old_text occurs {count} times in {path}; include more surrounding text to make it unique, "
            "or pass replace_all=true"
        )
    _write(repo, tracker, path, text.replace(old_text, new_text).encode("utf-8"))
    return f"Replaced {count if replace_all else 1} occurrence(s) in {path}"


def search_code(
    repo: RepoContext,
    pattern: str,
    path: str = ".",
    glob: str | None = None,
    literal: bool = False,
    ignore_case: bool = False,
    max_results: int = 100,
) -> str:
    """Search the repo's text files for a regular expression (or literal text); prints path:line: text.

    Args:
        pattern: Python regular expression, or literal text when literal is true.
        path: Directory or file to search, relative to the repo root.
        glob: Only files matching this glob (`*.py`; with a `/` it matches the repo-relative path).
        literal: Treat pattern as plain text.
        ignore_case: Match case-insensitively.
        max_results: Stop after this many matching lines (at most 500).
    """
    try:
        regex = re.compile(re.escape(pattern) if literal else pattern, re.IGNORECASE if ignore_case else 0)
    except re.error as error:
        raise ToolUsageError(f"invalid regular expression {pattern!r}: {error}") from None
    limit = max(1, min(max_results, MAX_RESULTS))
    hits: list[str] = []
    for file, relative in _files(repo, path, glob):
        for number, line in _text_lines(repo, file):
            if regex.search(line):
                hits.append(f"{relative}:{number}: {_clip(line)}")
                if len(hits) > limit:
                    return "\n".join([*hits[:limit], f"[stopped after {limit} matches; narrow the pattern or path]"])
    return "\n".join(hits) if hits else f"No matches for {pattern!r}."


def list_files(repo: RepoContext, pattern: str = "*", path: str = ".", max_results: int = 500) -> str:
    """List the repo's files (repo-relative paths, sorted), optionally filtered by a glob.

    Args:
        pattern: Glob such as `*.py` (matches file names) or `src/*/test_*.py` (matches repo-relative paths).
        path: Directory to list, relative to the repo root.
        max_results: Stop after this many files (at most 500).
    """
    limit = max(1, min(max_results, MAX_RESULTS))
    found: list[str] = []
    for _file, relative in _files(repo, path, pattern):
        found.append(relative)
        if len(found) > limit:
            return "\n".join([*found[:limit], f"[stopped after {limit} files; narrow the pattern or path]"])
    return "\n".join(found) if found else f"No files match {pattern!r} under {path}."


def only_own_tools(tools: Iterable[AgentTool]) -> bool:
    """Whether every tool is one of the built-in file tools (which read a lazy worktree through its guard)."""
    return all(tool.source in _OWN_TOOLS for tool in tools)


def register_builtins(registry: ToolRegistry) -> ToolRegistry:
    """Register the five built-in tools (generated per repo as `{repo}:read-file`, ...)."""
    registry.register_builtin("read-file")(read_file)
    registry.register_builtin("write-file", writes_files=True)(write_file)
    registry.register_builtin("edit-file", writes_files=True)(edit_file)
    registry.register_builtin("search-code")(search_code)
    registry.register_builtin("list-files")(list_files)
    return registry


def _open_existing(repo: RepoContext, path: str) -> BinaryIO:
    """An existing regular file of the repo, opened for reading through the guard (in a lazy worktree, a file
    not written out is read from git's objects)."""
    try:
        _guarded, handle = repo.guard.open_file(path)
    except IsADirectoryError:
        raise ToolUsageError(f"{path} is a directory; use list-files to see what it holds") from None
    except (FileNotFoundError, NotADirectoryError):
        raise ToolUsageError(f"no such file: {path}") from None
    return handle


def _write(repo: RepoContext, tracker: WriteTracker, path: str, data: bytes) -> None:
    """Write through the guard and record the file actually written (a symlink inside the repo names its
    target); `.gitmodules` and `.gitattributes` must hold nothing git's fsck would refuse."""
    guarded = repo.guard.resolve(path)
    check_git_file(path, guarded.relative.name, data)
    try:
        written = repo.guard.write(path, data)
    except IsADirectoryError:
        raise ToolUsageError(f"{path} is a directory") from None
    except NotADirectoryError:
        raise ToolUsageError(f"{path}: a parent of it is a file, not a directory") from None
    tracker.record(repo.name, written.text)


def _size(handle: BinaryIO) -> int:
    """The size of an open file (on disk, or read from git's objects)."""
    position = handle.tell()
    size = handle.seek(0, io.SEEK_END)
    handle.seek(position)
    return size


def _read_whole(handle: BinaryIO, path: str) -> str:
    size = _size(handle)
    data = handle.read(MAX_READ_BYTES)
    text = data.decode("utf-8", errors="replace")
    if size <= MAX_READ_BYTES:
        return text
    cut = text.rfind("\n") + 1 or len(text)
    shown = text[:cut].count("\n")
    return (
        f"{text[:cut]}[truncated: {path} has {size} bytes; showing the first {shown} lines. "
        "Pass start_line and end_line to read further.]"
    )


def _read_lines(binary: BinaryIO, path: str, start: int, end: int | None) -> str:
    if start < 1 or (end is not None and end < start):
        raise ToolUsageError("start_line must be at least 1 and end_line at least start_line")
    lines: list[str] = []
    size, total = 0, 0
    with io.TextIOWrapper(binary, encoding="utf-8", errors="replace", newline="") as handle:
        for total, line in enumerate(handle, start=1):
            if total < start or (end is not None and total > end):
                continue
            size += len(line)
            if size > MAX_READ_BYTES:
                lines.append(f"[truncated at line {total}; read the rest with start_line={total}]")
                break
            lines.append(line)
    if start > total:
        raise ToolUsageError(f"{path} has {total} lines; start_line {start} is past the end")
    return "".join(lines)


def _files(repo: RepoContext, path: str, glob: str | None) -> Iterator[tuple[GuardedPath, str]]:
    try:
        found = repo.guard.walk(path)
        first = next(found, None)
    except (FileNotFoundError, NotADirectoryError):
        raise ToolUsageError(f"no such file or directory: {path}") from None
    if first is None:
        return
    for file in itertools.chain([first], found):
        relative = file.text
        name = file.relative.name
        if glob is None or fnmatch.fnmatchcase(relative if "/" in glob else name, glob):
            yield file, relative


def _text_lines(repo: RepoContext, file: GuardedPath) -> Iterator[tuple[int, str]]:
    try:
        _guarded, handle = repo.guard.open_file(file.text)
    except (OSError, ToolPathError):
        return
    with handle:
        if _size(handle) > MAX_SEARCH_FILE_BYTES:
            return
        data = handle.read()
    if b"\x00" in data[:8192]:
        return
    yield from enumerate(data.decode("utf-8", errors="replace").splitlines(), start=1)


def _clip(line: str) -> str:
    return line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + "…"


_OWN_TOOLS = frozenset({read_file, write_file, edit_file, search_code, list_files})
