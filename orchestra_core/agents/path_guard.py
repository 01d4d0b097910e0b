"""The one path guard every agent tool goes through: paths an agent gives stay inside their repo, out of git's
and Orchestra's own state, whatever symlinks, spellings or races it tries.

A path is first checked as text (relative, no `..`, no NUL or newline, no name git treats as `.git`, no
`.orchestra` at any depth, no `.gitmodules` or `.gitattributes` as a directory), then resolved beneath the
repo root one component at a time, following symlinks only while they stay inside and refusing any step into
a `.git`, a state directory or a protected directory (the run's own state where it lies inside the repo). Files are then opened relative to directory handles
with O_NOFOLLOW at every step, so a component swapped for a symlink after the check fails the open instead
of being followed.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import stat
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from orchestra_core.agents.git_names import git_name, is_dotgit, is_gitattributes, is_gitmodules, is_state_dir
from orchestra_core.agents.guarded_path import GuardedPath, ToolPathError
from orchestra_core.model.layout import STATE_DIR
from orchestra_core.ports.tree_files import TreeFiles

__all__ = ["GuardedPath", "PathGuard", "ToolPathError", "git_name", "is_dotgit", "is_gitmodules"]

MAX_SYMLINK_FOLLOWS = 40
MAX_PATH_CHARS = 4096
_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class PathGuard:
    """Resolves and opens paths an agent gives, beneath `root` (a real, absolute directory).

    `protected` directories (Orchestra's state directory, the run directory) are refused wherever they lie
    inside the root; those that hold the root itself (a worktree under `.orchestra/worktrees/`) are out of
    reach anyway and ignored.

    In a lazy worktree, `tree` holds the tracked files not written out: a path missing on disk is looked up
    there (a symbolic link of the tree is followed by the same rules as one on disk), read from git's objects,
    and listed with the files on disk; what is on disk always wins.
    """

    def __init__(
        self, root: Path, repo_name: str, protected: tuple[Path, ...] = (), tree: TreeFiles | None = None
    ) -> None:
        self.root = root
        self.repo_name = repo_name
        self.tree = tree
        real = (Path(os.path.realpath(path)) for path in protected)
        self.protected = tuple(path for path in real if path != root and path.is_relative_to(root))

    # Text ------------------------------------------------------------------------------------------
    def relative(self, path: str) -> PurePosixPath:
        """Validate and normalise a repo-relative path as text (the filesystem is not touched).

        Raises:
            ToolPathError: Empty, absolute, `~`, `..`, a NUL or newline, too long, a name git treats as
                `.git`, a state directory (`.orchestra`, any case, at any depth), or `.gitmodules` or
                `.gitattributes` as a directory.
        """
        if not isinstance(path, str) or not path.strip():
            raise ToolPathError("a path is required")
        if "\x00" in path:
            raise ToolPathError(f"{path!r} contains a NUL byte")
        if len(path) > MAX_PATH_CHARS:
            raise ToolPathError(f"a path of {len(path)} characters is too long (at most {MAX_PATH_CHARS})")
        text = path.replace("\\", "/")  # names keep their spaces: ' a.txt' is not 'a.txt'
        if text.startswith(("/", "~")) or (len(text) > 1 and text[1] == ":"):
            raise ToolPathError(
                f"{path!r} is absolute; give a path relative to the {self.repo_name} repo root"
            )
        parts = [part for part in PurePosixPath(text).parts if part not in ("", ".")]
        if ".." in parts:
            raise ToolPathError(f"{path!r} contains '..'; paths must stay inside the {self.repo_name} repo")
        for number, part in enumerate(parts, start=1):
            self._check_component(path, part, directory=number < len(parts))
        return PurePosixPath(*parts) if parts else PurePosixPath(".")

    def _check_component(self, path: str, part: str, *, directory: bool) -> None:
        if "\n" in part or "\r" in part:
            raise ToolPathError(f"{path!r} has a line break in a file name; use another name")
        if is_dotgit(part):
            raise ToolPathError(f"{path!r} is inside .git (or a name git treats as .git); tools may not touch git's own files")
        if is_state_dir(part):
            raise ToolPathError(f"{path!r} is inside {STATE_DIR}, Orchestra's own state; tools may not touch it")
        if directory and (is_gitmodules(part) or is_gitattributes(part)):
            raise ToolPathError(f"{path!r} makes {part!r} a directory; git reads it as a file (.gitmodules or .gitattributes)")

    # The filesystem ----------------------------------------------------------------------------------
    def resolve(self, path: str) -> GuardedPath:
        """The path with every symlink resolved beneath the root (missing trailing components allowed).

        Raises:
            ToolPathError: It leaves the repo, or reaches `.git` or the state directory, through a symlink
                or by name; or the symlinks loop.
        """
        pending = list(self.relative(path).parts)
        resolved: list[str] = []
        follows = 0
        while pending:
            part = pending.pop(0)
            if part in ("", "."):
                continue
            if part == "..":
                if not resolved:
                    raise ToolPathError(f"{path!r} leaves the {self.repo_name} repo through a symlink")
                resolved.pop()
                continue
            self._check_component(path, part, directory=False)
            target = self._link_target(resolved, part)
            if target is None:
                resolved.append(part)
                continue
            follows += 1
            if follows > MAX_SYMLINK_FOLLOWS:
                raise ToolPathError(f"{path!r}: too many symbolic links")
            pending = self._link_parts(path, target) + pending
            if target.startswith("/"):
                resolved = []
        for part in resolved[:-1]:
            self._check_component(path, part, directory=True)
        guarded = GuardedPath(self.root, PurePosixPath(*resolved) if resolved else PurePosixPath("."))
        self._check_protected(path, guarded.absolute)
        return guarded

    def _check_protected(self, path: str, absolute: Path) -> None:
        for protected in self.protected:
            if absolute == protected or absolute.is_relative_to(protected):
                raise ToolPathError(f"{path!r} is inside {protected}, Orchestra's own state; tools may not touch it")

    def _link_target(self, resolved: list[str], part: str) -> str | None:
        try:
            info = os.lstat(self.root.joinpath(*resolved, part))
        except FileNotFoundError:
            return self._tree_link_target("/".join([*resolved, part]))
        except NotADirectoryError:
            return None
        return os.readlink(self.root.joinpath(*resolved, part)) if stat.S_ISLNK(info.st_mode) else None

    def _tree_link_target(self, relative: str) -> str | None:
        """The target of a symbolic link of a lazy worktree's tree that is not written out (None otherwise)."""
        if self.tree is None:
            return None
        entry = self.tree.entry(relative)
        if entry is None or not entry.is_symlink:
            return None
        return self.tree.read(entry).decode("utf-8", errors="surrogateescape")

    def _link_parts(self, path: str, target: str) -> list[str]:
        if not target.startswith("/"):
            return target.split("/")
        absolute = Path(os.path.normpath(target))
        if absolute != self.root and not absolute.is_relative_to(self.root):
            raise ToolPathError(f"{path!r} leaves the {self.repo_name} repo through a symlink")
        return list(absolute.relative_to(self.root).parts)

    def open_read(self, path: str) -> tuple[GuardedPath, int]:
        """An open descriptor (read-only) of an existing regular file, and its resolved path.

        Raises:
            ToolPathError: As for `resolve`, or the file changed into a symlink while being opened.
            FileNotFoundError / IsADirectoryError: There is no such file, or it is a directory.
        """
        guarded = self.resolve(path)
        if guarded.relative == PurePosixPath("."):
            raise IsADirectoryError(path)
        parent = self._open_parent(path, guarded, create=False)
        try:
            fd = self._open_final(path, parent, guarded.relative.name, os.O_RDONLY | os.O_NONBLOCK)
        finally:
            os.close(parent)
        try:
            self._require_regular(path, fd)
        except BaseException:
            os.close(fd)
            raise
        return guarded, fd

    def open_file(self, path: str) -> tuple[GuardedPath, BinaryIO]:
        """An existing regular file opened for binary reading, and its resolved path: the file on disk, else
        (in a lazy worktree) its content from git's objects.

        Raises:
            As `open_read`.
        """
        try:
            guarded, fd = self.open_read(path)
        except FileNotFoundError:
            data = self._tree_file(path)
            if data is None:
                raise
            return data
        return guarded, os.fdopen(fd, "rb")

    def _tree_file(self, path: str) -> tuple[GuardedPath, BinaryIO] | None:
        """A lazy worktree's file that is not on disk, read from git's objects (None when it has none there)."""
        if self.tree is None:
            return None
        guarded = self.resolve(path)
        entry = self.tree.entry(guarded.text)
        if entry is None:
            if self.tree.is_directory(guarded.text):
                raise IsADirectoryError(path)
            return None
        if not entry.is_file:  # a submodule: an empty directory in a checkout
            raise IsADirectoryError(path)
        if self.on_disk_ancestor_is_file(guarded):
            return None
        return guarded, io.BytesIO(self.tree.read(entry))

    def on_disk_ancestor_is_file(self, guarded: GuardedPath) -> bool:
        """Whether a parent of `guarded` exists on disk as something other than a directory (the tree's file
        below it is then gone)."""
        for depth in range(1, len(guarded.relative.parts)):
            try:
                info = os.lstat(self.root.joinpath(*guarded.relative.parts[:depth]))
            except FileNotFoundError:
                return False
            if not stat.S_ISDIR(info.st_mode):
                return True
        return False

    def write(self, path: str, data: bytes) -> GuardedPath:
        """Create or replace a regular file with `data` (parent directories are created).

        Raises:
            ToolPathError: As for `resolve`; a component changed into a symlink meanwhile; the file is not a
                regular file, or has other hard links (it could be git's own file under another name).
        """
        guarded = self.resolve(path)
        if guarded.relative == PurePosixPath("."):
            raise IsADirectoryError(path)
        self._check_tree_write(guarded, path)
        parent = self._open_parent(path, guarded, create=True)
        try:
            flags = os.O_WRONLY | os.O_CREAT | os.O_NONBLOCK
            fd = self._open_final(path, parent, guarded.relative.name, flags)
        finally:
            os.close(parent)
        try:
            self._require_regular(path, fd, single_link=True)
            os.ftruncate(fd, 0)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        return guarded

    def _check_tree_write(self, guarded: GuardedPath, path: str) -> None:
        """In a lazy worktree, refuse what a checkout would: writing over a tracked directory, or below a
        tracked file, that are not written out."""
        if self.tree is None or os.path.lexists(guarded.absolute):
            return
        if self.tree.is_directory(guarded.text):
            raise IsADirectoryError(path)
        parts = guarded.relative.parts
        for depth in range(1, len(parts)):
            prefix = self.root.joinpath(*parts[:depth])
            if os.path.lexists(prefix):
                continue
            if self.tree.entry("/".join(parts[:depth])) is not None:
                raise NotADirectoryError(path)

    def walk(self, path: str) -> Iterator[GuardedPath]:
        """Every regular file at or below `path` (sorted: a directory's files before its subdirectories'),
        symlinks followed only while they stay inside; `.git` and the state directory are skipped. In a lazy
        worktree the tracked files not written out are listed with those on disk.

        Raises:
            ToolPathError: As for `resolve`.
            FileNotFoundError: Nothing is there.
        """
        start = self.resolve(path)
        if self.tree is None:
            yield from self.walk_disk(start, path)
            return
        from orchestra_core.agents.lazy_walk import walk_with_tree

        yield from walk_with_tree(self, self.tree, start, path)

    def walk_disk(self, start: GuardedPath, path: str) -> Iterator[GuardedPath]:
        """`walk` over the files on disk only."""
        info = self._stat(start)
        if info is None:
            raise FileNotFoundError(path)
        if stat.S_ISREG(info.st_mode):
            yield start
            return
        for directory, subdirectories, files in os.walk(start.absolute, followlinks=False):
            subdirectories[:] = sorted(d for d in subdirectories if not self._skipped(directory, d))
            for name in sorted(files):
                relative = Path(directory, name).relative_to(self.root).as_posix()
                try:
                    found = self.resolve(relative)
                except ToolPathError:
                    continue  # a symlink out of the repo (or into .git) is not the repo's content
                found_info = self._stat(found)
                if found_info is not None and stat.S_ISREG(found_info.st_mode):
                    yield GuardedPath(self.root, PurePosixPath(relative))

    def stat_of(self, guarded: GuardedPath) -> os.stat_result | None:
        """`lstat` of a resolved path (None when nothing is there)."""
        return self._stat(guarded)

    def _skipped(self, directory: str, name: str) -> bool:
        return is_dotgit(name) or is_state_dir(name) or Path(directory, name) in self.protected

    def _stat(self, guarded: GuardedPath) -> os.stat_result | None:
        try:
            return os.stat(guarded.absolute, follow_symlinks=False)
        except (FileNotFoundError, NotADirectoryError):
            return None

    def _open_parent(self, path: str, guarded: GuardedPath, *, create: bool) -> int:
        fd = os.open(self.root, _DIRECTORY_FLAGS)
        for part in guarded.relative.parts[:-1]:
            try:
                child = self._step(path, fd, part, create)
            finally:
                os.close(fd)
            fd = child
        return fd

    def _step(self, path: str, parent: int, part: str, create: bool) -> int:
        try:
            return os.open(part, _DIRECTORY_FLAGS, dir_fd=parent)
        except FileNotFoundError:
            if not create:
                raise
        except OSError as error:
            raise self._swapped(path, error) from None
        with contextlib.suppress(FileExistsError):  # made meanwhile: opening it below checks what it is
            os.mkdir(part, 0o777, dir_fd=parent)
        try:
            return os.open(part, _DIRECTORY_FLAGS, dir_fd=parent)
        except OSError as error:
            raise self._swapped(path, error) from None

    def _open_final(self, path: str, parent: int, name: str, flags: int) -> int:
        try:
            return os.open(name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666, dir_fd=parent)
        except OSError as error:
            if error.errno in (errno.ENOENT, errno.EISDIR):
                raise
            raise self._swapped(path, error) from None

    def _swapped(self, path: str, error: OSError) -> Exception:
        if error.errno == errno.ENXIO:  # a FIFO without a reader, a device without its driver
            return ToolPathError(f"{path!r} is not a regular file (a device, pipe or socket); tools only use files")
        if error.errno in (errno.ELOOP, errno.ENOTDIR):
            return ToolPathError(f"{path!r} changed into a symbolic link while it was being opened; not followed")
        return error

    def _require_regular(self, path: str, fd: int, *, single_link: bool = False) -> None:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(path)
        if not stat.S_ISREG(info.st_mode):
            raise ToolPathError(f"{path!r} is not a regular file (a device, pipe or socket); tools only use files")
        if single_link and info.st_nlink > 1:
            raise ToolPathError(
                f"{path!r} has {info.st_nlink} hard links; tools do not write files that also exist elsewhere"
            )
