"""InMemoryGit: the Git port without git. Objects, refs, indexes and config live in memory; working trees
are real directories, because agents and tools write files there."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from orchestra_core.model.turn import FileVersion
from orchestra_core.ports.git import (
    FileChange,
    GitError,
    Identity,
    LogEntry,
    MergeResult,
    RepositoryInfo,
    StatusEntry,
    TreeChange,
    WorktreeInfo,
)
from orchestra_core.ports.tree_files import TreeFiles
from orchestra_core.testing import _git_files as disk
from orchestra_core.testing import _git_worktree as worktree_ops
from orchestra_core.testing._git_merge import checkout_tree, merge_commits
from orchestra_core.testing._git_objects import FILE_MODE, Commit
from orchestra_core.testing._git_repository import Repository, Worktree, config_key, dated, put
from orchestra_core.testing._git_status import changed_files, diff_parts, status_entries
from orchestra_core.testing._git_text import clean_message, parse_trailers, unified_diff, valid_branch_name

_BUILDER = Identity("Repo Builder", "builder@example.com")


class InMemoryGit:
    """A Git port for tests and embedders that want no git executable.

    Make repositories with `init_repository`; every other path the port's methods get must lie in one
    of them (or in a worktree added with `worktree_add`). Object ids are git's own, so the empty tree is
    `4b825dc…` and identical content gives identical ids. Hooks never run (there are none to install);
    `lock` excludes threads of this process only.
    """

    def __init__(self) -> None:
        self._worktrees: dict[Path, tuple[Repository, Worktree]] = {}
        self._registry_lock = threading.Lock()

    # --- making repositories -------------------------------------------------------------------

    def init_repository(
        self, path: Path, files: Mapping[str, str] | None = None, *, branch: str = "main"
    ) -> Path:
        """A repository at `path` on `branch`; `files` (text by path) are written and committed as `initial`."""
        root = Path(path).resolve()
        root.mkdir(parents=True, exist_ok=True)
        (root / ".git").mkdir(exist_ok=True)
        main = Worktree(root, root / ".git", f"ref: refs/heads/{branch}")
        repo = Repository(root / ".git", [main])
        repo.config.update(
            {"core.repositoryformatversion": ["0"], "core.filemode": ["true"], "core.bare": ["false"]}
        )
        with self._registry_lock:
            if root in self._worktrees:
                raise GitError(root, ["init"], f"{root} is already a repository")
            self._worktrees[root] = (repo, main)
        if files:
            for relative, text in files.items():
                disk.write_file(root, relative, FILE_MODE, text.encode("utf-8"))
            self.sync_index(root, list(files))
            self.commit(root, "initial", author=_BUILDER, committer=_BUILDER)
        return Path(path)

    # --- repositories and refs -----------------------------------------------------------------

    def repository(self, path: Path) -> RepositoryInfo:
        if not Path(path).is_dir():
            raise GitError(path, ["rev-parse"], "not a directory")
        repo, worktree = self._locate(path)
        return RepositoryInfo(worktree.path, worktree.git_dir, repo.common_dir, is_bare=False)

    def resolve_commit(self, repo: Path, rev: str) -> str | None:
        repository, worktree = self._locate(repo)
        with repository.lock:
            oid = repository.rev(worktree, rev) if rev and not rev.startswith("-") else None
            return oid if oid in repository.objects.commits else None

    def current_branch(self, worktree: Path) -> str | None:
        ref = self._locate(worktree)[1].branch_ref
        return ref.removeprefix("refs/heads/") if ref else None

    def status(self, worktree: Path, *, untracked: bool = True) -> tuple[StatusEntry, ...]:
        repo, tree = self._locate(worktree)
        with repo.lock:
            head = repo.objects.commit_files(repo.head_of(tree))
            return status_entries(
                tree.path, head, tree.index, repo.reader(tree), repo.ignores(tree), untracked
            )

    def branches(self, repo: Path) -> tuple[str, ...]:
        repository = self._locate(repo)[0]
        with repository.lock:
            return tuple(
                sorted(r.removeprefix("refs/heads/") for r in repository.refs if r.startswith("refs/heads/"))
            )

    def is_valid_branch_name(self, repo: Path, name: str) -> bool:
        self._locate(repo)
        return valid_branch_name(name)

    def create_branch(self, repo: Path, name: str, sha: str) -> None:
        if not valid_branch_name(name):
            raise GitError(repo, ["update-ref", f"refs/heads/{name}"], f"'{name}' is not a valid branch name")
        self.update_ref(repo, f"refs/heads/{name}", sha, expected_old="")

    def delete_branch(self, repo: Path, name: str) -> None:
        repository = self._locate(repo)[0]
        with repository.lock:
            repository.refs.pop(f"refs/heads/{name}", None)

    def update_ref(self, repo: Path, ref: str, new: str, *, expected_old: str | None) -> None:
        repository, worktree = self._locate(repo)
        with repository.lock:
            repository.set_ref(worktree, ref, new, expected_old)

    # --- worktrees -----------------------------------------------------------------------------

    def worktree_add(self, repo: Path, path: Path, branch: str) -> None:
        repository, _ = self._locate(repo)
        command = ["worktree", "add", str(path), branch]
        with repository.lock:
            head = repository.refs.get(f"refs/heads/{branch}")
            if head is None:
                raise GitError(repo, command, f"fatal: invalid reference: {branch}", 128)
            repository.refuse_checked_out(branch, None, command)
            self._add_worktree(repository, repo, path, f"ref: refs/heads/{branch}", head, command)

    def worktree_add_detached(self, repo: Path, path: Path, sha: str) -> None:
        repository, _ = self._locate(repo)
        command = ["worktree", "add", "--detach", str(path), sha]
        with repository.lock:
            if sha not in repository.objects.commits:
                raise GitError(repo, command, f"fatal: invalid reference: {sha}", 128)
            self._add_worktree(repository, repo, path, sha, sha, command)

    def _add_worktree(
        self, repository: Repository, repo: Path, path: Path, head_text: str, commit: str, command: list[str]
    ) -> None:
        """A linked worktree at `path` whose HEAD file says `head_text`, with `commit`'s files (lock held)."""
        target = Path(path).resolve()
        if target.exists() and any(target.iterdir()):
            raise GitError(repo, command, f"fatal: '{path}' already exists", 128)
        target.mkdir(parents=True, exist_ok=True)
        names = {w.git_dir.name for w in repository.worktrees[1:]}
        name = next(
            f"{target.name}{n or ''}"
            for n in range(len(names) + 1)
            if f"{target.name}{n or ''}" not in names
        )
        worktree = Worktree(target, repository.common_dir / "worktrees" / name, head_text)
        worktree.index = repository.objects.commit_files(commit)
        disk.checkout_files(target, repository.objects, worktree.index)
        (target / ".git").write_text(f"gitdir: {worktree.git_dir}\n", encoding="utf-8")
        repository.worktrees.append(worktree)
        with self._registry_lock:
            self._worktrees[target] = (repository, worktree)

    def worktrees(self, repo: Path) -> tuple[WorktreeInfo, ...]:
        repository = self._locate(repo)[0]
        with repository.lock:
            return tuple(
                WorktreeInfo(
                    path=w.path,
                    head=repository.head_of(w),
                    branch=w.branch_ref.removeprefix("refs/heads/") if w.branch_ref else None,
                    detached=w.branch_ref is None,
                    prunable=not w.path.exists(),
                )
                for w in repository.worktrees
            )

    def worktree_remove(self, repo: Path, path: Path) -> None:
        repository = self._locate(repo)[0]
        target = Path(path).resolve()
        with repository.lock:
            linked = [w for w in repository.worktrees[1:] if w.path == target]
            if not linked:
                raise GitError(
                    repo, ["worktree", "remove", str(path)], f"fatal: '{path}' is not a working tree", 128
                )
            disk.remove(target.parent, target.name)
            self._forget(repository, linked[0])

    def worktree_prune(self, repo: Path) -> None:
        repository = self._locate(repo)[0]
        with repository.lock:
            for worktree in [w for w in repository.worktrees[1:] if not w.path.exists()]:
                self._forget(repository, worktree)

    def checkout(self, worktree: Path, branch: str) -> None:
        repo, tree = self._locate(worktree)
        command = ["checkout", branch, "--"]
        with repo.lock:
            target = repo.refs.get(f"refs/heads/{branch}")
            if target is None:
                raise GitError(
                    worktree, command, f"error: pathspec '{branch}' did not match any file(s) known to git", 1
                )
            repo.refuse_checked_out(branch, tree, command)
            worktree_ops.switch(repo, tree, branch, target, command)

    def discard_changes(self, worktree: Path, sha: str) -> None:
        repo, tree = self._locate(worktree)
        with repo.lock:
            worktree_ops.reset_hard_and_clean(repo, tree, repo.commit_id(tree, sha, ["reset", "--hard", sha]))

    def checkout_tree(self, worktree: Path, old: str, new: str) -> None:
        repo, tree = self._locate(worktree)
        with repo.lock:
            checkout_tree(repo, tree, old, new, ["read-tree", "-m", "-u", old, new])

    def merge_tree(self, repo: Path, ours: str, theirs: str) -> MergeResult:
        repository, worktree = self._locate(repo)
        with repository.lock:
            return merge_commits(repository, worktree, ours, theirs)

    def add_exclude(self, repo: Path, pattern: str) -> bool:
        repository = self._locate(repo)[0]
        with repository.lock:
            if pattern in (line.strip() for line in repository.excludes):
                return False
            repository.excludes.append(pattern)
            return True

    # --- staging and committing ----------------------------------------------------------------

    def sync_index(
        self, worktree: Path, paths: Sequence[str], versions: Mapping[str, FileVersion] | None = None
    ) -> None:
        repo, tree = self._locate(worktree)
        versions = versions or {}
        with repo.lock:
            worktree_ops.stage(repo, tree, [path for path in paths if path not in versions])
            for path in dict.fromkeys(p for p in paths if p in versions):
                put(tree.index, path, worktree_ops.captured_entry(repo, versions[path], tree.index.get(path)))

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
        repo, tree = self._locate(worktree)
        versions = versions or {}
        paths = list(dict.fromkeys([*paths, *versions]))
        command = ["commit", "--only", "--", *paths] if paths else ["commit"]
        with repo.lock:
            head = repo.head_of(tree)
            if paths:
                unknown = [
                    p
                    for p in paths
                    if p not in versions and p not in tree.index and not os.path.lexists(tree.path / p)
                ]
                if unknown:
                    raise GitError(
                        worktree,
                        command,
                        f"error: pathspec '{unknown[0]}' did not match any file(s) known to git",
                        1,
                    )
                self.sync_index(worktree, paths, versions)
                content = repo.objects.commit_files(head)
                for path in paths:
                    put(content, path, tree.index.get(path))
            else:
                content = dict(tree.index)
            text = clean_message(message)
            root = repo.objects.put_files(content)
            if head is not None and root == repo.objects.commits[head].tree:
                raise GitError(worktree, command, "nothing to commit, working tree clean", 1)
            if not text:
                raise GitError(worktree, command, "Aborting commit due to empty commit message.", 1)
            sha = repo.objects.put_commit(
                Commit(root, (head,) if head else (), dated(author), dated(committer), text)
            )
            if tree.branch_ref:
                repo.refs[tree.branch_ref] = sha
            else:
                tree.head = sha
            return sha

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
        repository, worktree = self._locate(repo)
        with repository.lock:
            root = repository.rev(worktree, f"{tree}^{{tree}}")
            if root is None:
                raise GitError(repo, ["commit-tree", tree], f"fatal: not a valid object name {tree}", 128)
            commits = tuple(repository.commit_id(worktree, p, ["commit-tree", "-p", p]) for p in parents)
            return repository.objects.put_commit(
                Commit(root, commits, dated(author), dated(committer), message)
            )

    def tree_with_files(
        self, worktree: Path, base: str, paths: Sequence[str], versions: Mapping[str, FileVersion] | None = None
    ) -> TreeChange:
        repo, tree = self._locate(worktree)
        with repo.lock:
            commit = repo.commit_id(tree, base, ["cat-file", "--batch"])
            files = repo.objects.commit_files(commit)
            content = worktree_ops.with_files(repo, tree, files, paths, versions or {})
            return TreeChange(commit, repo.objects.commits[commit].tree, repo.objects.put_files(content))

    def capture_files(self, worktree: Path, paths: Sequence[str]) -> Mapping[str, FileVersion]:
        repo, tree = self._locate(worktree)
        with repo.lock:
            return worktree_ops.capture(repo, tree, paths)

    def untracked_matching(self, worktree: Path, patterns: Sequence[str]) -> tuple[str, ...]:
        repo, tree = self._locate(worktree)
        with repo.lock:
            rules = disk.IgnoreRules(tree.path, patterns, per_directory=False)
            return tuple(
                path
                for path, is_directory in disk.walk(tree.path)
                if not is_directory and path not in tree.index and not (tree.path / path / ".git").exists()
                and rules.ignored(path, False)
            )

    def ignored_paths(self, worktree: Path, paths: Sequence[str]) -> tuple[str, ...]:
        repo, tree = self._locate(worktree)
        with repo.lock:
            ignores, head = repo.ignores(tree), repo.objects.commit_files(repo.head_of(tree))
            return tuple(
                p
                for p in paths
                if p not in head
                and ignores.ignored(p, (tree.path / p).is_dir() and not (tree.path / p).is_symlink())
            )

    # --- history -------------------------------------------------------------------------------

    def log(self, repo: Path, rev: str, *, max_count: int | None = None) -> tuple[LogEntry, ...]:
        repository, worktree = self._locate(repo)
        with repository.lock:
            return repository.history(repository.commit_id(worktree, rev, ["log", rev, "--"]), max_count)

    def diff(
        self, repo: Path, old: str | None = None, new: str | None = None, *, paths: Sequence[str] = ()
    ) -> str:
        repository, worktree = self._locate(repo)
        with repository.lock:
            objects = repository.objects
            if old is None:
                before, after = objects.commit_files(repository.head_of(worktree)), dict(worktree.index)
                read = None
            else:
                before = objects.files(repository.tree_id(worktree, old))
                after = objects.files(repository.tree_id(worktree, new)) if new is not None else {}
                read = repository.reader(worktree, before) if new is None else None
            return unified_diff(diff_parts(objects, before, after, read, worktree.index, paths))

    def trailers(self, repo: Path, rev: str) -> Mapping[str, str]:
        repository, worktree = self._locate(repo)
        with repository.lock:
            sha = repository.commit_id(worktree, rev, ["log", "-1", rev, "--"])
            return parse_trailers(repository.objects.commits[sha].message)

    def changed_files(self, repo: Path, rev: str) -> tuple[FileChange, ...]:
        repository, worktree = self._locate(repo)
        with repository.lock:
            sha = repository.commit_id(worktree, rev, ["log", "-1", "--name-status", rev, "--"])
            commit = repository.objects.commits[sha]
            parent = commit.parents[0] if commit.parents else None
            return changed_files(
                repository.objects.commit_files(parent), repository.objects.files(commit.tree)
            )

    # --- configuration and locking -------------------------------------------------------------

    def config_values(self, repo: Path, key: str) -> tuple[str, ...]:
        repository = self._locate(repo)[0]
        with repository.lock:
            return tuple(repository.config.get(config_key(repo, key), ()))

    def add_config_value(self, repo: Path, key: str, value: str) -> bool:
        repository = self._locate(repo)[0]
        with repository.lock:
            values = repository.config.setdefault(config_key(repo, key), [])
            if value in values:
                return False
            values.append(value)
            return True

    @contextmanager
    def lock(self, repo: Path) -> Iterator[None]:
        with self._locate(repo)[0].lock:
            yield

    # --- lazy worktrees: this fake always writes every file, which the port allows -------------------

    def worktree_add_lazy(self, repo: Path, path: Path, branch: str) -> None:
        self.worktree_add(repo, path, branch)

    def tree_files(self, worktree: Path) -> TreeFiles | None:
        self._locate(worktree)
        return None

    def materialize(self, worktree: Path) -> bool:
        self._locate(worktree)
        return False

    # --- internals -----------------------------------------------------------------------------

    def _locate(self, path: Path) -> tuple[Repository, Worktree]:
        start = Path(path).resolve()
        with self._registry_lock:
            for candidate in (start, *start.parents):
                if candidate in self._worktrees:
                    return self._worktrees[candidate]
        raise GitError(
            path,
            ["rev-parse", "--show-toplevel"],
            "fatal: not a git repository (or any of the parent directories): .git",
            128,
        )

    def _forget(self, repo: Repository, worktree: Worktree) -> None:
        repo.worktrees.remove(worktree)
        with self._registry_lock:
            self._worktrees.pop(worktree.path, None)
