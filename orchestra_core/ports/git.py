"""Git port: the repository operations the workspace layer needs, and what they return."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from pathlib import Path
from typing import Protocol, runtime_checkable

from attrs import field, frozen

from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.immutable import frozen_map
from orchestra_core.model.turn import FileVersion
from orchestra_core.ports.tree_files import TreeFiles


class GitError(OrchestraError):
    """A git command failed.

    Attributes:
        repo: The repository (or worktree) directory the command ran in.
        command: The git arguments, without the leading `git`.
        stderr: What git printed on standard error (stripped).
        exit_code: git's exit status (None when git could not be started).
    """

    def __init__(
        self, repo: Path | str, command: Sequence[str], stderr: str, exit_code: int | None = None
    ) -> None:
        self.repo = str(repo)
        self.command = tuple(command)
        self.stderr = stderr.strip()
        self.exit_code = exit_code
        shown = " ".join(self.command)
        super().__init__(f"git {shown} failed in {self.repo}: {self.stderr or f'exit code {exit_code}'}")


class RefConflictError(GitError):
    """A ref did not hold the expected old value: another writer moved it first."""


@frozen
class RepositoryInfo:
    """Where a repository's parts are.

    Attributes:
        toplevel: The working tree root (None for a bare repository).
        git_dir: This working tree's git directory (`.git/worktrees/<name>` for a linked worktree).
        common_dir: The directory shared by all worktrees (objects, refs, `info/exclude`, hooks).
        is_bare: Whether the repository has no working tree.
        object_format: `sha1` or `sha256`.
    """

    toplevel: Path | None
    git_dir: Path
    common_dir: Path
    is_bare: bool
    object_format: str = "sha1"


@frozen
class Identity:
    """A commit author or committer, and when."""

    name: str
    email: str
    when: datetime | None = None


@frozen
class StatusEntry:
    """One line of `git status --porcelain=v2`.

    Attributes:
        path: Repo-relative path (the new path for renames).
        index: Staged state letter (`.` unchanged, `M`, `A`, `D`, `R`, `C`, `U`; `?` untracked, `!` ignored).
        worktree: Unstaged state letter, same alphabet.
        original_path: The old path of a rename or copy.
    """

    path: str
    index: str
    worktree: str
    original_path: str | None = None

    @property
    def untracked(self) -> bool:
        return self.index == "?"


@frozen
class WorktreeInfo:
    """One entry of `git worktree list`."""

    path: Path
    head: str | None
    branch: str | None
    bare: bool = False
    detached: bool = False
    prunable: bool = False


@frozen
class LogEntry:
    """One commit as `git log` shows it."""

    sha: str
    parents: tuple[str, ...]
    author_name: str
    author_email: str
    committer_name: str
    committer_email: str
    authored_at: str
    message: str
    trailers: Mapping[str, str] = field(factory=dict, converter=frozen_map)

    @property
    def subject(self) -> str:
        return self.message.split("\n", 1)[0]


@frozen
class FileChange:
    """A file a commit changed, against its first parent.

    Attributes:
        path: Repo-relative path.
        status: `A` added, `M` modified, `D` deleted, `T` type changed (a file became a symlink, say).
    """

    path: str
    status: str


@frozen
class TreeChange:
    """A tree built from a commit plus some files (see `Git.tree_with_files`).

    Attributes:
        base_commit: The commit the tree was built on.
        base_tree: That commit's tree.
        tree: The new tree (equal to `base_tree` when the files did not change anything).
    """

    base_commit: str
    base_tree: str
    tree: str

    @property
    def changed(self) -> bool:
        return self.tree != self.base_tree


@frozen
class ConflictedFile:
    """A file a merge could not resolve (see `Git.merge_tree`).

    Attributes:
        path: Repo-relative path.
        text: The file as the merged tree holds it: with conflict markers for a content conflict
            ("" when the merge left no file there, e.g. a modify/delete conflict).
    """

    path: str
    text: str = ""


@frozen
class MergeResult:
    """What merging two commits gives, computed without touching a worktree or moving a ref.

    Attributes:
        tree: The merged tree (with conflicts, the tree holding the conflicted files with markers).
        clean: Whether the merge had no conflict.
        conflicts: The conflicted files, in path order (empty when clean).
        messages: git's informational messages (`CONFLICT (content): ...`, `Auto-merging ...`).
    """

    tree: str
    clean: bool
    conflicts: tuple[ConflictedFile, ...] = ()
    messages: tuple[str, ...] = ()

    @property
    def conflicted_paths(self) -> tuple[str, ...]:
        return tuple(conflict.path for conflict in self.conflicts)


@runtime_checkable
class Git(Protocol):
    """Git operations on local repositories and their worktrees.

    Every method takes the directory to run in (a repository, or a worktree of it) first. Failures raise
    `GitError` naming the directory, the command and git's message. Hooks never run, except in
    `commit(..., run_hooks=True)`.
    """

    def repository(self, path: Path) -> RepositoryInfo:
        """Describe the repository containing `path`.

        Raises:
            GitError: `path` is not inside a git repository.
        """
        ...

    def resolve_commit(self, repo: Path, rev: str) -> str | None:
        """The full SHA of the commit `rev` names, or None when it names no commit."""
        ...

    def current_branch(self, worktree: Path) -> str | None:
        """The branch checked out in `worktree` (short name), or None when HEAD is detached."""
        ...

    def status(self, worktree: Path, *, untracked: bool = True) -> tuple[StatusEntry, ...]:
        """Changed, staged and (optionally) untracked paths; ignored paths are left out."""
        ...

    def branches(self, repo: Path) -> tuple[str, ...]:
        """Every local branch (short names), sorted."""
        ...

    def is_valid_branch_name(self, repo: Path, name: str) -> bool:
        """Whether `name` is allowed as a branch name (`git check-ref-format`)."""
        ...

    def create_branch(self, repo: Path, name: str, sha: str) -> None:
        """Create branch `name` at commit `sha`.

        Raises:
            RefConflictError: The branch already exists.
        """
        ...

    def delete_branch(self, repo: Path, name: str) -> None:
        """Delete branch `name` whether or not it is merged."""
        ...

    def update_ref(self, repo: Path, ref: str, new: str, *, expected_old: str | None) -> None:
        """Point `ref` (a full ref name) at `new`, only if it still holds `expected_old`.

        Args:
            expected_old: The SHA the ref must hold now; None skips the check.

        Raises:
            RefConflictError: The ref held something else.
        """
        ...

    def worktree_add(self, repo: Path, path: Path, branch: str) -> None:
        """Check out existing branch `branch` in a new linked worktree at `path`."""
        ...

    def worktree_add_detached(self, repo: Path, path: Path, sha: str) -> None:
        """Check out commit `sha` in a new linked worktree at `path` with a detached HEAD (no branch)."""
        ...

    def worktrees(self, repo: Path) -> tuple[WorktreeInfo, ...]:
        """Every worktree of the repository, the main one first."""
        ...

    def worktree_remove(self, repo: Path, path: Path) -> None:
        """Remove the linked worktree at `path`, discarding any changes in it."""
        ...

    def worktree_prune(self, repo: Path) -> None:
        """Forget worktrees whose directories are gone."""
        ...

    def checkout(self, worktree: Path, branch: str) -> None:
        """Switch `worktree` to existing branch `branch`."""
        ...

    def discard_changes(self, worktree: Path, sha: str) -> None:
        """Reset `worktree`'s branch, index and files to `sha` and delete untracked (not ignored) files."""
        ...

    def checkout_tree(self, worktree: Path, old: str, new: str) -> None:
        """Bring `worktree`'s index and files from commit `old` to commit `new` (`read-tree -m -u`),
        without touching HEAD: for a worktree whose branch was moved from `old` to `new` with `update_ref`.

        Local changes to files that differ between the two commits make it fail (nothing changed then);
        other local changes and untracked files stay.
        """
        ...

    def merge_tree(self, repo: Path, ours: str, theirs: str) -> MergeResult:
        """Merge commit `theirs` into commit `ours` (a three-way merge from their merge base) as
        `git merge-tree --write-tree` does: objects are written, no worktree, index or ref changes.

        Raises:
            GitError: A name is not a commit, or the commits have no common history.
        """
        ...

    def add_exclude(self, repo: Path, pattern: str) -> bool:
        """Add `pattern` to the repository's `info/exclude` unless present; True when it was added."""
        ...

    def commit(
        self,
        worktree: Path,
        message: str,
        *,
        author: Identity,
        committer: Identity,
        paths: Sequence[str] = (),
        run_hooks: bool = False,
        versions: Mapping[str, FileVersion] | None = None,
    ) -> str:
        """Commit with `git commit`; returns the new commit's SHA.

        Args:
            paths: Commit only these paths (their working-tree content); empty commits the index.
            run_hooks: Run the repository's pre-commit and commit-msg hooks.
            versions: Captured versions (`capture_files`) committed for their paths instead of the files as they
                are now: HEAD plus `paths` and these, nothing else the index holds; the worktree's index then
                holds them too.
        """
        ...

    def log(self, repo: Path, rev: str, *, max_count: int | None = None) -> tuple[LogEntry, ...]:
        """Commits reachable from `rev`, newest first."""
        ...

    def diff(
        self, repo: Path, old: str | None = None, new: str | None = None, *, paths: Sequence[str] = ()
    ) -> str:
        """A unified diff.

        `old` and `new` (commits or trees) compare the two; only `old` compares it with the working
        tree; neither shows what is staged (index against HEAD).
        """
        ...

    def trailers(self, repo: Path, rev: str) -> Mapping[str, str]:
        """The trailers of commit `rev` (last value wins for repeated keys)."""
        ...

    def changed_files(self, repo: Path, rev: str) -> tuple[FileChange, ...]:
        """The files commit `rev` changed against its first parent (every file of a root commit).

        Renames show as a deletion and an addition.
        """
        ...

    def config_values(self, repo: Path, key: str) -> tuple[str, ...]:
        """Every value of `key` in the repository's own config (not global or system), in file order."""
        ...

    def add_config_value(self, repo: Path, key: str, value: str) -> bool:
        """Add `value` to multi-valued `key` in the repository's own config unless present.

        Shared by all worktrees of the repository. Returns True when it was added.
        """
        ...

    def ignored_paths(self, worktree: Path, paths: Sequence[str]) -> tuple[str, ...]:
        """Those of `paths` that match an ignore rule and are not in the tree of `worktree`'s HEAD."""
        ...

    def untracked_matching(self, worktree: Path, patterns: Sequence[str]) -> tuple[str, ...]:
        """Untracked files (and symbolic links) of `worktree` that match the gitignore-style `patterns`, read
        as one ignore file at the top level (`git ls-files --others --ignored --exclude-from`): whether git
        ignores them otherwise does not matter. A matched directory stands for the files below it; nothing
        in `.git` or in a nested repository is listed."""
        ...

    def capture_files(self, worktree: Path, paths: Sequence[str]) -> Mapping[str, FileVersion]:
        """Store the files at `paths` of `worktree` as blobs now, as `tree_with_files` would take them (git's
        clean filters applied, the executable bit read as `core.fileMode` says), and return their versions.

        A missing path gives a deleted version. A path that is a directory, or lies beyond a symbolic link,
        is left out (`tree_with_files` reads it when it builds the tree). Writes blob objects only.

        Raises:
            GitError: A path is not a clean repo-relative path, or git failed.
        """
        ...

    def tree_with_files(
        self, worktree: Path, base: str, paths: Sequence[str], versions: Mapping[str, FileVersion] | None = None
    ) -> TreeChange:
        """Build the tree of commit `base` with `paths` taken from `worktree` (deleted where missing).

        A path in `versions` takes that captured version instead of the file as it is now (a mode the
        repository does not track, `core.fileMode=false`, keeps `base`'s mode as for a file read now).
        A path that is a directory in the worktree stands for the files `base` tracks below it (like
        `git add -u`): changed ones are updated, missing ones deleted; new files must be listed. Writes
        blob and tree objects only: no index, ref or file changes. Cost grows with the number and depth
        of the paths, not the size of the repository.
        """
        ...

    def commit_tree(
        self,
        repo: Path,
        tree: str,
        *,
        parents: Sequence[str],
        message: str,
        author: Identity,
        committer: Identity,
    ) -> str:
        """Write a commit object (no hooks, no signing) and return its SHA; no ref moves."""
        ...

    def sync_index(
        self, worktree: Path, paths: Sequence[str], versions: Mapping[str, FileVersion] | None = None
    ) -> None:
        """Refresh `worktree`'s own index entries for `paths` from the files (added, updated or removed); a path
        in `versions` gets that version instead (what a commit of captured versions holds), so a file changed
        since shows as a change not yet staged."""
        ...

    def lock(self, repo: Path) -> AbstractContextManager[None]:
        """Exclusive, re-entrant lock on the repository, across threads and processes."""
        ...

    def worktree_add_lazy(self, repo: Path, path: Path, branch: str) -> None:
        """Check out existing branch `branch` in a new linked worktree at `path` without writing its files: the
        index holds the branch's whole tree (every entry marked skip-worktree, so `status` sees no change), files
        are written as they are created or changed, and `tree_files` reads the others from git's objects.
        `commit`, `sync_index` and `checkout_tree` work on it as on any worktree."""
        ...

    def tree_files(self, worktree: Path) -> TreeFiles | None:
        """The tracked files of lazy `worktree` that are not written out (None for a full checkout)."""
        ...

    def materialize(self, worktree: Path) -> bool:
        """Make lazy `worktree` a full checkout: write every tracked file not there yet (files already there
        stay as they are). False, and nothing done, when it was a full checkout already."""
        ...
