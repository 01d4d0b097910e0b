"""Text as git writes and reads it, for the in-memory Git: unified diffs, trailers, messages, ref names."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

from orchestra_core.testing._git_objects import blob_id

_TRAILER = re.compile(r"([A-Za-z0-9][A-Za-z0-9-]*)\s*:\s?(.*)")
_REF_FORBIDDEN = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]")

DiffPart = tuple[str, tuple[str, bytes] | None, tuple[str, bytes] | None]
"""One changed path of a diff: (path, (mode, content) before or None, (mode, content) after or None)."""


def unified_diff(parts: Iterable[DiffPart], abbreviate: int = 7) -> str:
    """`git diff` output (`a/` and `b/` prefixes, three lines of context) for the changed paths, in order."""
    chunks: list[str] = []
    for path, old, new in parts:
        lines = [f"diff --git a/{path} b/{path}"]
        if old is None and new is not None:
            lines.append(f"new file mode {new[0]}")
        elif new is None and old is not None:
            lines.append(f"deleted file mode {old[0]}")
        elif old is not None and new is not None and old[0] != new[0]:
            lines += [f"old mode {old[0]}", f"new mode {new[0]}"]
        old_data, new_data = old[1] if old else b"", new[1] if new else b""
        if old is not None and new is not None and old_data == new_data:
            chunks.append("\n".join(lines) + "\n")
            continue
        old_id = blob_id(old_data)[:abbreviate] if old else "0" * abbreviate
        new_id = blob_id(new_data)[:abbreviate] if new else "0" * abbreviate
        same_mode = f" {new[0]}" if old is not None and new is not None and old[0] == new[0] else ""
        lines.append(f"index {old_id}..{new_id}{same_mode}")
        if b"\0" in old_data or b"\0" in new_data:
            lines.append(
                f"Binary files {'a/' + path if old else '/dev/null'} and {'b/' + path if new else '/dev/null'} differ"
            )
            chunks.append("\n".join(lines) + "\n")
            continue
        lines += [f"--- {'a/' + path if old else '/dev/null'}", f"+++ {'b/' + path if new else '/dev/null'}"]
        chunks.append("\n".join(lines) + "\n" + _hunks(old_data, new_data))
    return "".join(chunks)


def _hunks(old: bytes, new: bytes) -> str:
    before = old.decode("utf-8", "surrogateescape").splitlines(keepends=True)
    after = new.decode("utf-8", "surrogateescape").splitlines(keepends=True)
    out: list[str] = []
    for line in list(difflib.unified_diff(before, after, n=3, lineterm="\n"))[2:]:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def parse_trailers(message: str) -> dict[str, str]:
    """The trailers of a commit message: its last paragraph when every line of it is `Key: value`
    (indented lines continue the previous value); the last value wins. The subject is never one."""
    paragraphs = [p for p in re.split(r"\n[ \t]*\n", message.strip("\n")) if p.strip()]
    if len(paragraphs) < 2:
        return {}
    trailers: dict[str, str] = {}
    last = ""
    for line in paragraphs[-1].split("\n"):
        if line[:1] in (" ", "\t") and last:
            trailers[last] = f"{trailers[last]} {line.strip()}".strip()
            continue
        match = _TRAILER.fullmatch(line)
        if match is None:
            return {}
        last = match.group(1)
        trailers[last] = match.group(2).strip()
    return trailers


def clean_message(message: str) -> str:
    """`git commit --cleanup=whitespace`: trailing spaces, leading and trailing blank lines and runs of
    blank lines go; the message ends in one newline ("" when nothing is left)."""
    lines = [line.rstrip() for line in message.split("\n")]
    kept: list[str] = []
    for line in lines:
        if line or (kept and kept[-1]):
            kept.append(line)
    while kept and not kept[-1]:
        kept.pop()
    return "\n".join(kept) + "\n" if kept else ""


def valid_branch_name(name: str) -> bool:
    """Whether `refs/heads/<name>` passes `git check-ref-format` (and `name` is not `-x` or `HEAD`)."""
    if not name or name.startswith("-") or name in ("HEAD", "@"):
        return False
    full = f"refs/heads/{name}"
    if "@{" in full or ".." in full or full.endswith((".", "/")) or _REF_FORBIDDEN.search(full):
        return False
    return all(part and not part.startswith(".") and not part.endswith(".lock") for part in full.split("/"))
