"""Parsers for git's machine-readable output: status v2, worktree list, log records and trailers."""

from __future__ import annotations

from pathlib import Path

from orchestra_adapters.git.command import decode
from orchestra_core.ports.git import LogEntry, StatusEntry, WorktreeInfo

FIELD_SEPARATOR = "\x1f"
LOG_FORMAT = FIELD_SEPARATOR.join(
    ["%H", "%P", "%an", "%ae", "%cn", "%ce", "%aI", "%B", "%(trailers:only,unfold)"]
)


def parse_status_v2(raw: bytes) -> tuple[StatusEntry, ...]:
    """Entries of `git status --porcelain=v2 -z` (headers skipped)."""
    fields = raw.split(b"\0")
    entries: list[StatusEntry] = []
    index = 0
    while index < len(fields):
        record = decode(fields[index])
        index += 1
        if not record or record.startswith("#"):
            continue
        kind = record[0]
        if kind in "?!":
            entries.append(StatusEntry(record[2:], kind, kind))
        elif kind == "1":
            parts = record.split(" ", 8)
            entries.append(StatusEntry(parts[8], parts[1][0], parts[1][1]))
        elif kind == "2":
            parts = record.split(" ", 9)
            original = decode(fields[index])
            index += 1
            entries.append(StatusEntry(parts[9], parts[1][0], parts[1][1], original))
        elif kind == "u":
            parts = record.split(" ", 10)
            entries.append(StatusEntry(parts[10], parts[1][0], parts[1][1]))
    return tuple(entries)


def parse_worktree_list(raw: bytes) -> tuple[WorktreeInfo, ...]:
    """Entries of `git worktree list --porcelain -z`."""
    worktrees: list[WorktreeInfo] = []
    attributes: dict[str, str] = {}
    for field_bytes in raw.split(b"\0"):
        line = decode(field_bytes)
        if line:
            key, _, value = line.partition(" ")
            attributes[key] = value
            continue
        if attributes:
            worktrees.append(_worktree(attributes))
            attributes = {}
    if attributes:
        worktrees.append(_worktree(attributes))
    return tuple(worktrees)


def _worktree(attributes: dict[str, str]) -> WorktreeInfo:
    branch = attributes.get("branch")
    return WorktreeInfo(
        path=Path(attributes["worktree"]),
        head=attributes.get("HEAD"),
        branch=branch.removeprefix("refs/heads/") if branch else None,
        bare="bare" in attributes,
        detached="detached" in attributes,
        prunable="prunable" in attributes,
    )


def parse_log(raw: bytes) -> tuple[LogEntry, ...]:
    """Commits of `git log -z --format=LOG_FORMAT`."""
    entries = []
    for record in raw.split(b"\0"):
        text = decode(record)
        if not text.strip():
            continue
        sha, parents, an, ae, cn, ce, authored, message, trailers = text.lstrip("\n").split(FIELD_SEPARATOR)
        entries.append(
            LogEntry(
                sha=sha,
                parents=tuple(parents.split()),
                author_name=an,
                author_email=ae,
                committer_name=cn,
                committer_email=ce,
                authored_at=authored,
                message=message.rstrip("\n"),
                trailers=parse_trailers(trailers),
            )
        )
    return tuple(entries)


def parse_trailers(text: str) -> dict[str, str]:
    """`Key: value` lines (as `%(trailers:only,unfold)` prints them) as a dict; the last value wins."""
    trailers: dict[str, str] = {}
    for line in text.splitlines():
        key, separator, value = line.partition(":")
        if separator and key.strip():
            trailers[key.strip()] = value.strip()
    return trailers
