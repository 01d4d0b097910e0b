"""A unified diff (as `git diff` writes it) read into files and hunks for the web view, within a budget of
lines: what is past it is left out and said so (`truncated`), for the page to ask for that file alone."""

from __future__ import annotations

import re
from typing import Any

from attrs import define, field

_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")
_GIT_HEADER = re.compile(r'^diff --git "?a/(.*?)"? "?b/(.*?)"?$')


@define
class DiffFile:
    """One file of a diff: its paths, what happened to it, its hunks' lines (`[kind, old, new, text]`, kind one
    of ` `, `+`, `-`, or `@` for a hunk header), and how many lines it has in all."""

    path: str
    old_path: str
    status: str = "modified"
    binary: bool = False
    additions: int = 0
    deletions: int = 0
    lines: list[list[Any]] = field(factory=list)
    total_lines: int = 0
    truncated: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path, "old_path": self.old_path, "status": self.status, "binary": self.binary,
            "additions": self.additions, "deletions": self.deletions, "lines": self.lines,
            "total_lines": self.total_lines, "truncated": self.truncated,
        }


def parse_diff(text: str, budget: int) -> list[DiffFile]:
    """The files of `text`, keeping at most `budget` lines over all of them (then `truncated`); every file is
    listed with its counts however many lines are kept."""
    files: list[DiffFile] = []
    current: DiffFile | None = None
    old = new = 0
    for line in text.split("\n"):
        if line.startswith("diff --git "):
            current = _file_of(line)
            files.append(current)
            continue
        if current is None:
            continue
        if not current.total_lines and _header(current, line):
            continue
        hunk = _HUNK.match(line)
        if hunk:
            old, new = int(hunk.group(1)), int(hunk.group(2))
            entry: list[Any] = ["@", None, None, line]
        elif line[:1] == "+":
            current.additions += 1
            entry, new = ["+", None, new, line[1:]], new + 1
        elif line[:1] == "-":
            current.deletions += 1
            entry, old = ["-", old, None, line[1:]], old + 1
        elif line[:1] == " ":
            entry, old, new = [" ", old, new, line[1:]], old + 1, new + 1
        elif line.startswith("\\"):
            entry = ["\\", None, None, line]
        else:
            continue
        current.total_lines += 1
        if budget > 0:
            current.lines.append(entry)
            budget -= 1
        else:
            current.truncated = True
    return files


def _file_of(line: str) -> DiffFile:
    match = _GIT_HEADER.match(line)
    old_path, path = (match.group(1), match.group(2)) if match else ("", line[len("diff --git "):])
    return DiffFile(path, old_path)


def _header(current: DiffFile, line: str) -> bool:
    """Read one line of a file's extended header (before its first hunk) into `current`; False for a hunk."""
    if line.startswith("@@"):
        return False
    if line.startswith("new file mode"):
        current.status = "added"
    elif line.startswith("deleted file mode"):
        current.status = "deleted"
    elif line.startswith("rename from "):
        current.status, current.old_path = "renamed", line[len("rename from "):]
    elif line.startswith("rename to "):
        current.path = line[len("rename to "):]
    elif line.startswith("Binary files ") or line == "GIT binary patch":
        current.binary = True
    elif line.startswith("+++ ") and line[4:] != "/dev/null":
        current.path = _unpadded(line[6:] if line.startswith("+++ b/") else line[4:])
    elif line.startswith("--- ") and line[4:] != "/dev/null":
        current.old_path = _unpadded(line[6:] if line.startswith("--- a/") else line[4:])
    return True


def _unpadded(name: str) -> str:
    """A `---`/`+++` name without the tab git ends it with when it holds a space."""
    return name[:-1] if name.endswith("\t") else name


def file_from_diff(text: str) -> str | None:
    """A file's content from its diff against the empty tree (every line added); None for a binary file."""
    lines: list[str] = []
    started = False
    for line in text.split("\n"):
        if line.startswith("@@"):
            started = True
        elif line.startswith("Binary files "):
            return None
        elif started and line.startswith("+"):
            lines.append(line[1:])
        elif started and line.startswith("\\") and lines:
            return "\n".join(lines)  # "\ No newline at end of file"
    return "\n".join(lines) + "\n" if lines else ""
