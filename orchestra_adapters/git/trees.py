"""Builds a commit's tree with some files replaced, without an index: cost follows path depth, not repo size.

Only the trees on the way from the root to each written file are read (one `cat-file --batch`), the
files are hashed into blobs (one `hash-object --stdin-paths`), and the changed trees are written
(one `mktree --batch`). Their ids are computed here too, so parents can name children before git
has answered; git's answers are checked against them.
"""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath

from attrs import define, field

from orchestra_adapters.git.command import GitCommand, decode, encode
from orchestra_core.agents.path_guard import is_dotgit
from orchestra_core.model.turn import FileVersion
from orchestra_core.ports.git import GitError, TreeChange

TREE_MODE = "40000"
FILE_MODE = "100644"
EXECUTABLE_MODE = "100755"
SYMLINK_MODE = "120000"
GITLINK_MODE = "160000"

Entry = tuple[str, str]  # (mode, hex object id)


@define
class FileModes:
    """How the repository maps files to modes (`core.fileMode`, `core.symlinks`)."""

    trust_executable_bit: bool = True
    symlinks: bool = True


@define
class _Blobs:
    """Blob ids to write: regular files by path, symlink targets by path."""

    files: list[str] = field(factory=list)
    links: dict[str, bytes] = field(factory=dict)


class TreeBuilder:
    """Computes `base` + files -> new tree for one worktree."""

    def __init__(self, git: GitCommand, worktree: Path, object_format: str, modes: FileModes) -> None:
        self._git = git
        self._worktree = worktree
        self._hash_name = "sha256" if object_format == "sha256" else "sha1"
        self._raw_length = hashlib.new(self._hash_name).digest_size
        self._modes = modes

    def build(self, base: str, paths: Sequence[str], versions: Mapping[str, FileVersion] | None = None) -> TreeChange:
        """The tree of commit `base` with `paths` as they are in the worktree (missing ones deleted), or as
        `versions` captured them."""
        versions = versions or {}
        for path in paths:
            _check_path(self._worktree, path)
        captured = [path for path in dict.fromkeys(paths) if path in versions]
        paths = self._expand_directories(base, [path for path in paths if path not in versions])
        directories = sorted(
            {str(parent) for path in [*paths, *captured] for parent in PurePosixPath(path).parents} - {"."}
        )
        base_commit, base_tree, trees = self._read_trees(base, directories)
        changes, blobs = self._plan(paths, trees)
        blob_ids = self._write_blobs(blobs)
        for path, entry in changes.items():
            if entry is not None and entry[1] == "":
                changes[path] = (entry[0], blob_ids[path])
        for path in captured:
            changes[path] = self._captured_entry(versions[path], _existing(trees, path))
        new_tree = self._apply(trees, changes) or base_tree
        return TreeChange(base_commit=base_commit, base_tree=base_tree, tree=new_tree)

    def capture(self, paths: Sequence[str]) -> dict[str, FileVersion]:
        """Each path's version as it is now, its blob written; directories are left out (read when building)."""
        for path in paths:
            _check_path(self._worktree, path)
        changes, blobs = self._plan(list(dict.fromkeys(paths)), {})
        blob_ids = self._write_blobs(blobs)
        return {
            path: FileVersion(entry[0], blob_ids[path]) if entry is not None else FileVersion()
            for path, entry in changes.items()
        }

    def _captured_entry(self, version: FileVersion, existing: Entry | None) -> Entry | None:
        """A captured version's tree entry: its mode read as `_mode` reads a file's against `base`'s entry."""
        if version.deleted:
            return None
        mode = version.mode
        if existing is not None and existing[0] in (FILE_MODE, EXECUTABLE_MODE, SYMLINK_MODE) and mode != SYMLINK_MODE:
            if existing[0] == SYMLINK_MODE and not self._modes.symlinks:
                mode = SYMLINK_MODE
            elif not self._modes.trust_executable_bit and existing[0] != SYMLINK_MODE:
                mode = existing[0]
        return (mode, version.blob)

    def _expand_directories(self, base: str, paths: Sequence[str]) -> list[str]:
        """Paths that are directories in the worktree stand for the files `base` tracks below them."""
        directories = [
            p for p in paths if (self._worktree / p).is_dir() and not (self._worktree / p).is_symlink()
        ]
        if not directories:
            return list(dict.fromkeys(paths))
        raw = self._git.run(
            self._worktree, ["ls-tree", "-r", "-z", "--name-only", base, "--", *directories]
        ).stdout
        tracked = [decode(item) for item in raw.split(b"\0") if item]
        return list(dict.fromkeys([*paths, *tracked]))

    def _read_trees(self, base: str, directories: list[str]) -> tuple[str, str, dict[str, dict[str, Entry]]]:
        """(commit id, root tree id, {directory: entries}) for the root and `directories` of `base`."""
        requests = [f"{base}^{{commit}}", f"{base}^{{tree}}", *(f"{base}:{d}" for d in directories)]
        # -z: directory names may hold line breaks
        raw = self._git.run(self._worktree, ["cat-file", "--batch", "-z"], stdin=b"\0".join(map(encode, requests)) + b"\0")
        objects = _parse_batch(raw.stdout, requests)
        commit, root = objects[0], objects[1]
        if commit is None or root is None:
            raise GitError(self._worktree, ["cat-file", "--batch"], f"{base!r} does not name a commit")
        trees = {"": self._parse_tree(root[2])}
        for directory, found in zip(directories, objects[2:], strict=True):
            if found is not None and found[1] == "tree":
                trees[directory] = self._parse_tree(found[2])
        return commit[0], root[0], trees

    def _plan(
        self, paths: Sequence[str], trees: dict[str, dict[str, Entry]]
    ) -> tuple[dict[str, Entry | None], _Blobs]:
        """Each path's new entry (blob id "" until written; None deletes it) and the blobs to write."""
        changes: dict[str, Entry | None] = {}
        blobs = _Blobs()
        for path in paths:
            pure = PurePosixPath(path)
            existing = _existing(trees, path)
            try:
                info = self._lstat_inside(pure)
            except (FileNotFoundError, NotADirectoryError):
                changes[path] = None
                continue
            if stat.S_ISDIR(info.st_mode):
                if existing is not None and existing[0] != TREE_MODE:
                    changes[path] = None  # a file replaced by a directory (its files are listed apart)
                continue
            mode = self._mode(path, info, existing)
            changes[path] = (mode, "")
            if stat.S_ISLNK(info.st_mode):
                blobs.links[path] = os.fsencode(os.readlink(self._worktree / path))
            else:
                blobs.files.append(path)
        return changes, blobs

    def _lstat_inside(self, path: PurePosixPath) -> os.stat_result:
        """lstat of `path`, which git does not see (FileNotFoundError) when a parent is a symlink."""
        parent = self._worktree
        for part in path.parts[:-1]:
            parent = parent / part
            if parent.is_symlink():
                raise FileNotFoundError(f"{path} is beyond a symbolic link")
        return (self._worktree / path).lstat()

    def _mode(self, path: str, info: os.stat_result, existing: Entry | None) -> str:
        if stat.S_ISLNK(info.st_mode):
            return SYMLINK_MODE
        if not stat.S_ISREG(info.st_mode):
            raise GitError(self._worktree, ["hash-object", path], f"{path} is not a regular file or symlink")
        if existing is not None and existing[0] in (FILE_MODE, EXECUTABLE_MODE, SYMLINK_MODE):
            if existing[0] == SYMLINK_MODE and not self._modes.symlinks:
                return SYMLINK_MODE
            if not self._modes.trust_executable_bit and existing[0] != SYMLINK_MODE:
                return existing[0]
        executable = self._modes.trust_executable_bit and info.st_mode & stat.S_IXUSR
        return EXECUTABLE_MODE if executable else FILE_MODE

    def _write_blobs(self, blobs: _Blobs) -> dict[str, str]:
        ids: dict[str, str] = {}
        listed = [path for path in blobs.files if "\n" not in path]
        if listed:
            output = self._git.text(
                self._worktree,
                ["hash-object", "-w", "--stdin-paths"],
                stdin=encode("\n".join(listed) + "\n"),
            )
            ids.update(zip(listed, output.split("\n"), strict=True))
        for path in blobs.files:
            if "\n" in path:  # --stdin-paths is line-based: such a file goes in on its own, by content
                content = (self._worktree / path).read_bytes()
                ids[path] = self._git.text(self._worktree, ["hash-object", "-w", "--stdin", f"--path={path}"], stdin=content)
        if blobs.links:
            ids.update(self._write_link_blobs(blobs.links))
        return ids

    def _write_link_blobs(self, links: dict[str, bytes]) -> dict[str, str]:
        with tempfile.TemporaryDirectory(prefix="orchestra-links-") as scratch:
            files = []
            for number, target in enumerate(links.values()):
                file = Path(scratch) / str(number)
                file.write_bytes(target)
                files.append(str(file))
            output = self._git.text(
                self._worktree,
                ["hash-object", "-w", "--no-filters", "--stdin-paths"],
                stdin=encode("\n".join(files) + "\n"),
            )
        return dict(zip(links, output.split("\n"), strict=True))

    def _apply(self, trees: dict[str, dict[str, Entry]], changes: dict[str, Entry | None]) -> str | None:
        """Apply the changes (deletions first), write the changed trees, return the new root id (None: no edit)."""
        edits = _Edits(trees)
        for path, entry in sorted(changes.items(), key=lambda item: item[1] is not None):
            if entry is None:
                edits.delete(PurePosixPath(path).parts)
            else:
                edits.put(PurePosixPath(path).parts, entry)
        return self._write_trees(edits.edited) if edits.edited else None

    def _write_trees(self, edited: dict[str, dict[str, Entry]]) -> str:
        """Write every edited directory, deepest first, each one's id going into its parent."""
        expected: list[str] = []
        batch: list[bytes] = []
        root = ""
        for directory in sorted(edited, key=_depth, reverse=True):
            entries = edited[directory]
            if not directory:
                root = self._tree_id(entries)
            elif entries:
                tree_id = self._tree_id(entries)
                edited[_parent(directory)][PurePosixPath(directory).name] = (TREE_MODE, tree_id)
            else:
                edited[_parent(directory)].pop(PurePosixPath(directory).name, None)  # emptied: gone
                continue
            if entries:  # git knows the empty tree without it being written
                expected.append(root if not directory else tree_id)
                batch.append(_mktree_input(entries))
        if not batch:
            return root
        written = self._git.text(
            self._worktree, ["mktree", "-z", "--missing", "--batch"], stdin=b"\0".join(batch)
        )
        if written.split("\n") != expected:
            raise GitError(
                self._worktree, ["mktree"], f"tree ids differ: expected {expected}, got {written!r}"
            )
        return root

    def _tree_id(self, entries: dict[str, Entry]) -> str:
        digest = hashlib.new(self._hash_name)
        body = b"".join(
            encode(f"{int(mode, 8):o} {name}") + b"\0" + bytes.fromhex(object_id)
            for name, (mode, object_id) in sorted(entries.items(), key=_tree_order)
        )
        digest.update(b"tree %d\0" % len(body) + body)
        return digest.hexdigest()

    def _parse_tree(self, body: bytes) -> dict[str, Entry]:
        entries: dict[str, Entry] = {}
        position = 0
        while position < len(body):
            space = body.index(b" ", position)
            nul = body.index(b"\0", space)
            end = nul + 1 + self._raw_length
            entries[decode(body[space + 1 : nul])] = (decode(body[position:space]), body[nul + 1 : end].hex())
            position = end
        return entries


class _Edits:
    """Directories being changed, copied from the base trees on first touch; every ancestor is touched too."""

    def __init__(self, trees: dict[str, dict[str, Entry]]) -> None:
        self._trees = trees
        self.edited: dict[str, dict[str, Entry]] = {}

    def delete(self, parts: tuple[str, ...]) -> None:
        for depth in range(len(parts) - 1):
            child = self._current("/".join(parts[:depth])).get(parts[depth])
            if child is None or child[0] != TREE_MODE:
                return  # nothing there to delete
        self._touch(parts[:-1]).pop(parts[-1], None)
        self._forget_below("/".join(parts))

    def put(self, parts: tuple[str, ...], entry: Entry) -> None:
        for depth in range(len(parts) - 1):
            entries = self._touch(parts[:depth])
            child = entries.get(parts[depth])
            if child is not None and child[0] != TREE_MODE:
                del entries[parts[depth]]  # a file became a directory
                self.edited["/".join(parts[: depth + 1])] = {}
        self._touch(parts[:-1])[parts[-1]] = entry
        self._forget_below("/".join(parts))

    def _forget_below(self, path: str) -> None:
        """`path` is no longer a directory: drop edits made to it or below it."""
        for directory in [d for d in self.edited if d == path or d.startswith(path + "/")]:
            del self.edited[directory]

    def _current(self, directory: str) -> dict[str, Entry]:
        return self.edited.get(directory, self._trees.get(directory, {}))

    def _touch(self, parts: tuple[str, ...]) -> dict[str, Entry]:
        for depth in range(len(parts) + 1):
            directory = "/".join(parts[:depth])
            if directory not in self.edited:
                self.edited[directory] = dict(self._trees.get(directory, {}))
        return self.edited["/".join(parts)]


def _existing(trees: dict[str, dict[str, Entry]], path: str) -> Entry | None:
    """`path`'s entry in the base trees read (None when absent or its directory was not read)."""
    pure = PurePosixPath(path)
    parent = str(pure.parent) if str(pure.parent) != "." else ""
    return trees.get(parent, {}).get(pure.name)


def _depth(directory: str) -> int:
    return directory.count("/") + 1 if directory else 0


def _parent(directory: str) -> str:
    parent = str(PurePosixPath(directory).parent)
    return "" if parent == "." else parent


def _tree_order(item: tuple[str, Entry]) -> bytes:
    """Git sorts tree entries by name, comparing directories as if their name ended in `/`."""
    name, (mode, _) = item
    return encode(name) + (b"/" if mode == TREE_MODE else b"")


def _mktree_input(entries: dict[str, Entry]) -> bytes:
    lines = []
    for name, (mode, object_id) in entries.items():
        kind = "tree" if mode == TREE_MODE else "commit" if mode == GITLINK_MODE else "blob"
        lines.append(encode(f"{int(mode, 8):06o} {kind} {object_id}\t{name}") + b"\0")
    return b"".join(lines)


def _parse_batch(raw: bytes, requests: Sequence[str]) -> list[tuple[str, str, bytes] | None]:
    """`cat-file --batch` answers: (id, type, content), or None for a missing object."""
    found: list[tuple[str, str, bytes] | None] = []
    position = 0
    for request in requests:
        for verdict in (b" missing\n", b" ambiguous\n"):  # the request (spaces, line breaks) + the verdict
            answer = encode(request) + verdict
            if raw.startswith(answer, position):
                position += len(answer)
                found.append(None)
                break
        else:
            newline = raw.index(b"\n", position)
            header = decode(raw[position:newline]).split(" ")
            position = newline + 1
            size = int(header[2])
            found.append((header[0], header[1], raw[position : position + size]))
            position += size + 1
    return found


def _check_path(worktree: Path, path: str) -> None:
    """A clean repo-relative path that git would check out anywhere (never a spelling of `.git`)."""
    pure = PurePosixPath(path)
    bad = (
        not path
        or pure.is_absolute()
        or any(part in ("", "..", ".") or is_dotgit(part) for part in path.split("/"))
        or "\0" in path
    )
    if bad:
        raise GitError(worktree, ["hash-object", path], f"{path!r} is not a clean repo-relative file path")
