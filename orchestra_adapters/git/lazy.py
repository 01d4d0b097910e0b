"""Lazy worktrees: a linked worktree whose index holds the whole tree but whose files are written only when
needed. Every index entry is marked skip-worktree (git then takes the index's version for a missing file, so
`status` stays clean), files an agent writes are committed as usual (their entries lose the mark), and reads
of the others come from git's objects through `GitTreeFiles`. `materialize` turns one into a full checkout.

A worktree is lazy while its git dir holds the `orchestra-lazy` marker (no git process to tell)."""

from __future__ import annotations

import bisect
import os
import subprocess
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

from orchestra_adapters.git.command import GitCommand, decode, encode
from orchestra_core.ports.git import GitError
from orchestra_core.ports.tree_files import TreeEntry

MARKER = "orchestra-lazy"
_SPARSE = ("-c", "core.sparseCheckout=true", "-c", "core.sparseCheckoutCone=false")
_NOTHING = ""  # sparse-checkout patterns: no file is written
_EVERYTHING = "/*\n"


def worktree_git_dir(worktree: Path) -> Path | None:
    """The git dir of linked worktree `worktree`, read from its `.git` file (None for anything else)."""
    try:
        pointer = (Path(worktree) / ".git").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not pointer.startswith("gitdir: "):
        return None
    git_dir = Path(pointer.removeprefix("gitdir: "))
    return git_dir if git_dir.is_absolute() else Path(worktree) / git_dir


def is_lazy(worktree: Path) -> bool:
    """Whether `worktree` was made by `add_lazy_worktree` and not materialised since."""
    git_dir = worktree_git_dir(worktree)
    return git_dir is not None and (git_dir / MARKER).is_file()


def add_lazy_worktree(git: GitCommand, repo: Path, path: Path, branch: str, options: Sequence[str]) -> None:
    """`git worktree add --no-checkout`, then the index read from the branch's tree with every entry marked
    skip-worktree and no file written (a sparse checkout of nothing, for this one command)."""
    git.run(repo, [*options, "worktree", "add", "--quiet", "--no-checkout", str(path), branch])
    git_dir = worktree_git_dir(path)
    if git_dir is None:
        raise GitError(repo, ["worktree", "add", str(path)], f"{path} was not made a linked worktree")
    (git_dir / MARKER).write_bytes(b"")
    sparse_read_tree(git, path, _NOTHING, ["-m", "-u", "HEAD"])


def materialize(git: GitCommand, worktree: Path, options: Sequence[str]) -> bool:
    """Write every file of a lazy worktree (those already there, written by an agent, stay as they are) and
    clear the skip-worktree marks: a full checkout from then on. False when it was not lazy."""
    if not is_lazy(worktree):
        return False
    sparse_read_tree(git, worktree, _EVERYTHING, ["-m", "-u", "HEAD", "HEAD"], options=options)  # keeps the index
    git_dir = worktree_git_dir(worktree)
    if git_dir is not None:
        (git_dir / MARKER).unlink(missing_ok=True)
    return True


def reveal_written(git: GitCommand, worktree: Path) -> None:
    """Clear the skip-worktree mark of every tracked file a lazy worktree holds on disk (those written since
    the fork), so that `git status` and `git diff` compare them; the others stay read from git's objects."""
    on_disk = set(_files_on_disk(Path(worktree)))
    if not on_disk:
        return
    listed = git.run(worktree, ["ls-files", "-z", "-t"], work_tree=True).stdout
    marked = [record[2:] for record in listed.split(b"\0") if record.startswith(b"S ") and decode(record[2:]) in on_disk]
    if marked:
        stdin = b"".join(path + b"\0" for path in marked)
        git.run(worktree, ["update-index", "--no-skip-worktree", "-z", "--stdin"], stdin=stdin, work_tree=True)


def _files_on_disk(worktree: Path) -> Iterator[str]:
    """Repo-relative paths of the files and links in `worktree`, its `.git` left out."""
    for directory, subdirectories, files in os.walk(worktree):
        subdirectories[:] = [name for name in subdirectories if name != ".git"]
        relative = Path(directory).relative_to(worktree).as_posix()
        prefix = "" if relative == "." else f"{relative}/"
        yield from (f"{prefix}{name}" for name in files if prefix or name != ".git")


def sparse_read_tree(
    git: GitCommand, worktree: Path, patterns: str, args: Sequence[str], *, options: Sequence[str] = ()
) -> None:
    """`git read-tree <args>` in `worktree` as a sparse checkout of `patterns`, for this command only: the
    patterns file is removed afterwards and no config is written (the skip-worktree marks stay in the index)."""
    git_dir = worktree_git_dir(worktree)
    if git_dir is None:
        raise GitError(worktree, ["read-tree", *args], f"{worktree} is not a linked worktree")
    sparse = git_dir / "info" / "sparse-checkout"
    sparse.parent.mkdir(exist_ok=True)
    sparse.write_text(patterns, encoding="utf-8")
    try:
        git.run(worktree, [*_SPARSE, *options, "read-tree", *args], work_tree=True)
    finally:
        sparse.unlink(missing_ok=True)


class GitTreeFiles:
    """The skip-worktree entries of a lazy worktree's index (`git ls-files -s -t`, read again whenever the
    index file changes) and their blobs, read through one `git cat-file --batch` kept running until `close`."""

    def __init__(self, git: GitCommand, worktree: Path) -> None:
        self._git = git
        self._worktree = Path(worktree)
        self._git_dir = worktree_git_dir(self._worktree)
        self._lock = threading.Lock()
        self._stamp: tuple[int, int, int] | None = None
        self._entries: dict[str, TreeEntry] = {}
        self._paths: list[str] = []
        self._directories: set[str] = set()
        self._reader: subprocess.Popen[bytes] | None = None

    def entry(self, path: str) -> TreeEntry | None:
        with self._lock:
            self._load()
            return self._entries.get(_clean(path))

    def is_directory(self, path: str) -> bool:
        with self._lock:
            self._load()
            return _clean(path) in self._directories

    def entries_under(self, directory: str) -> Iterator[TreeEntry]:
        with self._lock:
            self._load()
            top = _clean(directory)
            prefix = f"{top}/" if top else ""
            start = bisect.bisect_left(self._paths, prefix)
            found = []
            for path in self._paths[start:]:
                if not path.startswith(prefix):
                    break
                found.append(self._entries[path])
        return iter(found)

    def read(self, entry: TreeEntry) -> bytes:
        with self._lock:
            reader = self._started()
            assert reader.stdin is not None and reader.stdout is not None
            try:
                reader.stdin.write(encode(entry.object_id) + b"\n")
                reader.stdin.flush()
                header = reader.stdout.readline().split()
            except OSError as error:
                self._stop()
                raise GitError(self._worktree, ["cat-file", "--batch"], str(error)) from error
            if len(header) != 3 or header[1] != b"blob":
                self._stop()
                raise GitError(self._worktree, ["cat-file", "--batch"], f"cannot read {entry.path} ({entry.object_id})")
            data = reader.stdout.read(int(header[2]))
            reader.stdout.read(1)  # the newline after the content
            return data

    def close(self) -> None:
        with self._lock:
            self._stop()

    def _started(self) -> subprocess.Popen[bytes]:
        if self._reader is None or self._reader.poll() is not None:
            self._reader = self._git.popen(self._worktree, ["cat-file", "--batch"])
        return self._reader

    def _stop(self) -> None:
        reader, self._reader = self._reader, None
        if reader is None:
            return
        for stream in (reader.stdin, reader.stdout):
            if stream is not None:
                stream.close()
        try:
            reader.wait(timeout=5)
        except subprocess.TimeoutExpired:
            reader.kill()
            reader.wait()

    def _load(self) -> None:
        stamp = self._index_stamp()
        if stamp is not None and stamp == self._stamp:
            return
        listed = self._git.run(self._worktree, ["ls-files", "-z", "-s", "-t"], work_tree=True).stdout
        entries: dict[str, TreeEntry] = {}
        directories = {""}
        for record in listed.split(b"\0"):
            if not record.startswith(b"S "):  # only skip-worktree entries: the others are on disk (or deleted)
                continue
            meta, _, raw_path = record[2:].partition(b"\t")
            mode, object_id, stage = decode(meta).split(" ")
            path = decode(raw_path)
            if stage != "0" or path in entries:
                continue
            entries[path] = TreeEntry(path, mode, object_id)
            parts = path.split("/")
            directories.update("/".join(parts[:depth]) for depth in range(1, len(parts)))
        self._entries, self._paths, self._directories = entries, sorted(entries), directories
        self._stamp = stamp

    def _index_stamp(self) -> tuple[int, int, int] | None:
        if self._git_dir is None:
            return None
        try:
            info = os.stat(self._git_dir / "index")
        except OSError:
            return None
        return info.st_mtime_ns, info.st_size, info.st_ino


def _clean(path: str) -> str:
    return "" if path in ("", ".") else path.strip("/")
