"""Merging without a worktree: `git merge-tree --write-tree` and reading the conflicted files it leaves."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from orchestra_adapters.git.command import GitCommand, decode, encode
from orchestra_core.ports.git import ConflictedFile, GitError, MergeResult

_CLEAN, _CONFLICTED = 0, 1


def merge_tree(git: GitCommand, repo: Path, ours: str, theirs: str) -> MergeResult:
    """`git merge-tree --write-tree` of two commits, with the text of each conflicted file."""
    for rev in (ours, theirs):
        if not rev or rev.startswith("-"):
            raise GitError(repo, ["merge-tree", ours, theirs], f"{rev!r} is not a commit")
    # merge-tree exits 1 for a name it cannot resolve, as for a conflict: resolve both first (raises).
    ours, theirs = (git.text(repo, ["rev-parse", "--verify", f"{rev}^{{commit}}"]) for rev in (ours, theirs))
    args = ["merge-tree", "--write-tree", "-z", "--name-only", "--messages", ours, theirs]
    process = git.run(repo, args, ok_codes=(_CLEAN, _CONFLICTED))
    tree, paths, messages = parse_merge_tree(process.stdout, conflicted=process.returncode == _CONFLICTED)
    if process.returncode == _CLEAN:
        return MergeResult(tree=tree, clean=True, messages=messages)
    texts = _file_texts(git, repo, tree, paths)
    conflicts = tuple(ConflictedFile(path, texts.get(path, "")) for path in sorted(paths))
    return MergeResult(tree=tree, clean=False, conflicts=conflicts, messages=messages)


def parse_merge_tree(raw: bytes, *, conflicted: bool) -> tuple[str, list[str], tuple[str, ...]]:
    """The tree, the conflicted paths and the messages of `merge-tree --write-tree -z --name-only` output.

    The output is `<tree>\\0`, then one `<path>\\0` per conflicted file (none when clean) and an empty
    field, then messages as `<n>\\0<path>\\0...<type>\\0<message>\\0`.
    """
    fields = raw.split(b"\0")
    tree = decode(fields[0]).strip()
    rest = fields[1:]
    paths: list[str] = []
    if b"" in rest:  # the conflicted files (none when clean) end with an empty field
        end = rest.index(b"")
        paths = [decode(item) for item in rest[:end]] if conflicted else []
        rest = rest[end + 1 :]
    return tree, paths, _messages(rest)


def _messages(fields: Sequence[bytes]) -> tuple[str, ...]:
    messages: list[str] = []
    position = 0
    while position < len(fields) and fields[position].isdigit():
        end = position + 1 + int(fields[position]) + 2  # the count, the paths, the type, the message
        if end > len(fields):
            break
        messages.append(decode(fields[end - 1]).rstrip("\n"))
        position = end
    return tuple(messages)


def _file_texts(git: GitCommand, repo: Path, tree: str, paths: Sequence[str]) -> dict[str, str]:
    """Each path's blob in `tree` as text (undecodable bytes replaced); paths without a blob are left out."""
    if not paths:
        return {}
    listed = git.run(repo, ["ls-tree", "-z", "--full-tree", tree, "--", *paths]).stdout
    blobs: dict[str, str] = {}
    for entry in listed.split(b"\0"):
        if not entry:
            continue
        meta, _, path = entry.partition(b"\t")
        parts = meta.split(b" ")
        if len(parts) == 3 and parts[1] == b"blob":
            blobs[decode(path)] = decode(parts[2])
    if not blobs:
        return {}
    oids = list(dict.fromkeys(blobs.values()))
    raw = git.run(repo, ["cat-file", "--batch"], stdin=encode("".join(f"{oid}\n" for oid in oids))).stdout
    contents = _batch_bodies(raw)
    return {path: contents.get(oid, b"").decode("utf-8", "replace") for path, oid in blobs.items()}


def _batch_bodies(raw: bytes) -> dict[str, bytes]:
    """`cat-file --batch` answers by object id (ids were asked for, so none is missing)."""
    bodies: dict[str, bytes] = {}
    position = 0
    while position < len(raw):
        newline = raw.index(b"\n", position)
        header = decode(raw[position:newline]).split(" ")
        position = newline + 1
        if len(header) < 3:
            continue
        size = int(header[2])
        bodies[header[0]] = raw[position : position + size]
        position += size + 1
    return bodies
