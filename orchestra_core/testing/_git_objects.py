"""Git's object model in memory, with git's own object ids: blobs, trees, commits, and revisions naming them."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from datetime import UTC, datetime

from attrs import frozen

from orchestra_core.ports.git import Identity

TREE_MODE = "40000"
FILE_MODE = "100644"
EXECUTABLE_MODE = "100755"
SYMLINK_MODE = "120000"

Entry = tuple[str, str]
"""A tree entry: (mode, object id)."""

Files = dict[str, Entry]
"""A tree flattened: repo-relative file path -> (mode, blob id); no directories."""

_SUFFIX = re.compile(r"~(\d*)|\^\{(\w*)\}|\^(\d*)")
_HEX = re.compile(r"[0-9a-f]{4,40}")


def object_id(kind: str, body: bytes) -> str:
    """The SHA-1 id git gives an object of this kind and content."""
    return hashlib.sha1(b"%s %d\0" % (kind.encode(), len(body)) + body, usedforsecurity=False).hexdigest()


def blob_id(data: bytes) -> str:
    """The id of a blob holding `data` (what `git hash-object` prints)."""
    return object_id("blob", data)


def git_time(when: datetime) -> str:
    """`<epoch seconds> <+hhmm>` as commit objects hold it (naive times are UTC)."""
    moment = when if when.tzinfo is not None else when.replace(tzinfo=UTC)
    offset = moment.utcoffset()
    minutes = int(offset.total_seconds()) // 60 if offset is not None else 0
    sign = "-" if minutes < 0 else "+"
    return f"{int(moment.timestamp())} {sign}{abs(minutes) // 60:02d}{abs(minutes) % 60:02d}"


@frozen
class Commit:
    """A commit object; the identities' times are always set."""

    tree: str
    parents: tuple[str, ...]
    author: Identity
    committer: Identity
    message: str

    def body(self) -> bytes:
        lines = [f"tree {self.tree}", *(f"parent {parent}" for parent in self.parents)]
        for role, who in (("author", self.author), ("committer", self.committer)):
            assert who.when is not None
            lines.append(f"{role} {who.name} <{who.email}> {git_time(who.when)}")
        return ("\n".join(lines) + "\n\n" + self.message).encode("utf-8", "surrogateescape")

    @property
    def authored_at(self) -> str:
        """The author date as `%aI` prints it."""
        assert self.author.when is not None
        when = (
            self.author.when if self.author.when.tzinfo is not None else self.author.when.replace(tzinfo=UTC)
        )
        return when.replace(microsecond=0).isoformat()


class ObjectStore:
    """Blobs, trees and commits by id. Callers serialise access (the repository lock)."""

    def __init__(self) -> None:
        self.blobs: dict[str, bytes] = {}
        self.trees: dict[str, dict[str, Entry]] = {}
        self.commits: dict[str, Commit] = {}
        self._flat: dict[str, Files] = {}

    def put_blob(self, data: bytes) -> str:
        oid = blob_id(data)
        self.blobs.setdefault(oid, bytes(data))
        return oid

    def put_commit(self, commit: Commit) -> str:
        oid = object_id("commit", commit.body())
        self.commits.setdefault(oid, commit)
        return oid

    def put_files(self, files: Mapping[str, Entry]) -> str:
        """Write the trees holding `files`; the root tree's id."""
        directories: dict[str, dict[str, Entry]] = {"": {}}
        for path, entry in files.items():
            parent, _, name = path.rpartition("/")
            directories.setdefault(parent, {})[name] = entry
            while parent:
                directories.setdefault(parent, {})
                parent = parent.rpartition("/")[0]
        for directory in sorted(directories, key=lambda d: d.count("/") + bool(d), reverse=True):
            oid = self._put_tree(directories[directory])
            if directory:
                parent, _, name = directory.rpartition("/")
                directories[parent][name] = (TREE_MODE, oid)
        return self._put_tree(directories[""])

    def _put_tree(self, entries: dict[str, Entry]) -> str:
        ordered = sorted(
            entries.items(), key=lambda item: item[0].encode() + (b"/" if item[1][0] == TREE_MODE else b"")
        )
        body = b"".join(
            f"{mode} {name}".encode() + b"\0" + bytes.fromhex(oid) for name, (mode, oid) in ordered
        )
        oid = object_id("tree", body)
        self.trees.setdefault(oid, dict(entries))
        return oid

    def files(self, tree: str) -> Files:
        """Every file below a tree, flattened (a copy)."""
        if tree not in self._flat:
            flat: Files = {}
            for name, (mode, oid) in self.trees[tree].items():
                if mode == TREE_MODE:
                    flat.update({f"{name}/{path}": entry for path, entry in self.files(oid).items()})
                else:
                    flat[name] = (mode, oid)
            self._flat[tree] = flat
        return dict(self._flat[tree])

    def commit_files(self, commit: str | None) -> Files:
        return self.files(self.commits[commit].tree) if commit is not None else {}

    def kind(self, oid: str) -> str | None:
        for kind, table in (("commit", self.commits), ("tree", self.trees), ("blob", self.blobs)):
            if oid in table:
                return kind
        return None

    def find(self, prefix: str) -> str | None:
        """The one object whose id starts with `prefix` (None when none or several do)."""
        if len(prefix) == 40:
            return prefix if self.kind(prefix) else None
        found = [
            oid for table in (self.commits, self.trees, self.blobs) for oid in table if oid.startswith(prefix)
        ]
        return found[0] if len(found) == 1 else None


def resolve(store: ObjectStore, refs: Mapping[str, str], head: str | None, rev: str) -> str | None:
    """The object `rev` names (`HEAD`, a ref or short name, an id or prefix, with `~n`, `^n`, `^{commit}`,
    `^{tree}`), or None. `head` is what HEAD holds: `ref: <full ref>`, an id, or None."""
    match = re.match(r"(.+?)((?:~\d*|\^\{\w*\}|\^\d*)*)$", rev, re.DOTALL)
    if match is None or rev.startswith("-"):
        return None
    oid = _base(store, refs, head, match.group(1))
    for suffix in _SUFFIX.finditer(match.group(2)):
        if oid is None:
            return None
        steps, peel, nth = suffix.groups()
        if peel is not None:
            oid = _peel(store, oid, peel)
        elif steps is not None:
            for _ in range(int(steps or 1)):
                oid = _parent(store, oid, 1)
                if oid is None:
                    return None
        else:
            oid = _parent(store, oid, int(nth if nth else 1))
    return oid


def _base(store: ObjectStore, refs: Mapping[str, str], head: str | None, name: str) -> str | None:
    if name in ("HEAD", "@"):
        if head is None or not head.startswith("ref: "):
            return head
        return refs.get(head.removeprefix("ref: "))
    for ref in (name, f"refs/{name}", f"refs/tags/{name}", f"refs/heads/{name}", f"refs/remotes/{name}"):
        if ref.startswith("refs/") and ref in refs:
            return refs[ref]
    return store.find(name) if _HEX.fullmatch(name) else None


def _peel(store: ObjectStore, oid: str, kind: str) -> str | None:
    if kind in ("", store.kind(oid)):
        return oid
    if kind == "tree" and oid in store.commits:
        return store.commits[oid].tree
    return None


def _parent(store: ObjectStore, oid: str, number: int) -> str | None:
    commit = store.commits.get(oid)
    if commit is None:
        return None
    if number == 0:
        return oid
    return commit.parents[number - 1] if number <= len(commit.parents) else None
