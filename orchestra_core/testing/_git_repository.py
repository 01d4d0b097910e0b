"""One in-memory repository: its objects, refs, config and worktrees, and the lookups the port's methods share."""

from __future__ import annotations

import heapq
import threading
from datetime import UTC, datetime
from pathlib import Path

from attrs import define, evolve, field

from orchestra_core.ports.git import GitError, Identity, LogEntry, RefConflictError
from orchestra_core.testing import _git_files as disk
from orchestra_core.testing._git_objects import Commit, Entry, Files, ObjectStore, blob_id, resolve
from orchestra_core.testing._git_text import parse_trailers


@define
class Worktree:
    """A working tree: its directory, its own git dir and index, and HEAD (`ref: <ref>` or a commit id)."""

    path: Path
    git_dir: Path
    head: str
    index: Files = field(factory=dict)

    @property
    def branch_ref(self) -> str | None:
        return self.head.removeprefix("ref: ") if self.head.startswith("ref: ") else None


@define
class Repository:
    """What all worktrees of a repository share. Callers hold `lock` while they use it."""

    common_dir: Path
    worktrees: list[Worktree]
    objects: ObjectStore = field(factory=ObjectStore)
    refs: dict[str, str] = field(factory=dict)
    config: dict[str, list[str]] = field(factory=dict)
    excludes: list[str] = field(factory=list)
    lock: threading.RLock = field(factory=threading.RLock)

    def head_of(self, worktree: Worktree) -> str | None:
        """The commit HEAD of `worktree` names (None on a branch without commits)."""
        return self.refs.get(worktree.branch_ref) if worktree.branch_ref else worktree.head

    def rev(self, worktree: Worktree, rev: str) -> str | None:
        return resolve(self.objects, self.refs, worktree.head, rev)

    def commit_id(self, worktree: Worktree, rev: str, command: list[str]) -> str:
        sha = self.rev(worktree, rev)
        if sha is None or sha not in self.objects.commits:
            raise GitError(worktree.path, command, f"fatal: bad revision '{rev}'", 128)
        return sha

    def tree_id(self, worktree: Worktree, rev: str) -> str:
        tree = self.rev(worktree, f"{rev}^{{tree}}")
        if tree is None:
            raise GitError(worktree.path, ["diff", rev], f"fatal: bad revision '{rev}'", 128)
        return tree

    def set_ref(self, worktree: Worktree, ref: str, new: str, expected_old: str | None) -> None:
        """Move `ref` to `new` if it holds `expected_old` ("" when it must not exist; None: no check)."""
        command = [
            "update-ref",
            "-m",
            "orchestra",
            ref,
            new,
            *([expected_old] if expected_old is not None else []),
        ]
        target = self.rev(worktree, new)
        if target is None or (ref.startswith("refs/heads/") and target not in self.objects.commits):
            raise GitError(worktree.path, command, f"fatal: {new}: not a valid SHA1", 128)
        current = self.refs.get(ref)
        if expected_old is not None and (current or "") != expected_old:
            raise RefConflictError(
                worktree.path,
                command,
                f"fatal: cannot lock ref '{ref}': is at {current} but expected {expected_old}",
                128,
            )
        clash = [r for r in self.refs if r != ref and (r.startswith(f"{ref}/") or ref.startswith(f"{r}/"))]
        if clash:
            raise GitError(
                worktree.path, command, f"fatal: cannot lock ref '{ref}': '{clash[0]}' exists", 128
            )
        self.refs[ref] = target

    def refuse_checked_out(self, branch: str, own: Worktree | None, command: list[str]) -> None:
        """Git keeps a branch checked out in one worktree at most."""
        for other in self.worktrees:
            if other is not own and other.branch_ref == f"refs/heads/{branch}":
                where = own.path if own else self.worktrees[0].path
                raise GitError(
                    where, command, f"fatal: '{branch}' is already checked out at '{other.path}'", 128
                )

    def reader(self, worktree: Worktree, known: Files | None = None) -> disk.Reader:
        """Reads the worktree's files; without core.fileMode the modes come from `known` (default: the index)."""
        trust = (self.config.get("core.filemode") or ["true"])[-1].lower() in ("true", "yes", "on", "1")
        modes = known if known is not None else worktree.index

        def read(path: str) -> disk.FileState | None:
            entry = modes.get(path)
            return disk.read_file(
                worktree.path, path, trust_mode=trust, known_mode=entry[0] if entry else None
            )

        return read

    def ignores(self, worktree: Worktree) -> disk.IgnoreRules:
        return disk.IgnoreRules(worktree.path, self.excludes)

    def history(self, start: str, max_count: int | None) -> tuple[LogEntry, ...]:
        """Commits reachable from `start`, newest commit time first (as `git log` orders them)."""
        commits = self.objects.commits
        queue, seen, entries = [(-_seconds(commits[start]), 0, start)], {start}, list[LogEntry]()
        while queue and (max_count is None or len(entries) < max_count):
            _, _, sha = heapq.heappop(queue)
            commit = commits[sha]
            entries.append(_log_entry(sha, commit))
            for parent in commit.parents:
                if parent not in seen:
                    seen.add(parent)
                    heapq.heappush(queue, (-_seconds(commits[parent]), len(seen), parent))
        return tuple(entries)


def put(content: Files, path: str, entry: Entry | None) -> None:
    """Set (with None: delete) a path, and drop what stands in its way: files below it and above it."""
    for other in [p for p in content if p.startswith(f"{path}/")]:
        del content[other]
    if entry is None:
        content.pop(path, None)
        return
    parts = path.split("/")
    for depth in range(1, len(parts)):
        content.pop("/".join(parts[:depth]), None)
    content[path] = entry


def file_entry(state: disk.FileState | None) -> Entry | None:
    """The index entry a file would get (None for no file)."""
    return (state[0], blob_id(state[1])) if state else None


def dated(identity: Identity) -> Identity:
    """The identity with a time (now, when it has none)."""
    return (
        identity
        if identity.when is not None
        else evolve(identity, when=datetime.now(UTC).replace(microsecond=0))
    )


def config_key(repo: Path, key: str) -> str:
    """A config key as git compares them: section and name case-insensitive, a subsection as written."""
    section, dot, name = key.rpartition(".")
    if not dot or not section or not name:
        raise GitError(repo, ["config", key], f"error: key does not contain a section: {key}", 1)
    first, _, subsection = section.partition(".")
    return f"{first.lower()}.{subsection + '.' if subsection else ''}{name.lower()}"


def _seconds(commit: Commit) -> float:
    return commit.committer.when.timestamp() if commit.committer.when is not None else 0.0


def _log_entry(sha: str, commit: Commit) -> LogEntry:
    return LogEntry(
        sha=sha,
        parents=commit.parents,
        author_name=commit.author.name,
        author_email=commit.author.email,
        committer_name=commit.committer.name,
        committer_email=commit.committer.email,
        authored_at=commit.authored_at,
        message=commit.message.rstrip("\n"),
        trailers=parse_trailers(commit.message),
    )
