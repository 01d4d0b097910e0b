"""What the Git contract's tests share: the runner's hooks, a repository per test, and port-only helpers."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta, timezone
from pathlib import Path

from orchestra_core.ports.git import Git, Identity
from orchestra_core.testing.contracts._base import PortContract

WHEN = datetime(2026, 3, 4, 5, 6, 7, tzinfo=timezone(timedelta(hours=2)))
AUTHOR = Identity("node (model-x)", "orchestra@local", WHEN)
COMMITTER = Identity("Orchestra", "orchestra@local", WHEN)
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
REPO_FILES = {"README.md": "hello\n", "src/app.py": "print('hi')\n"}


class GitContractBase(PortContract):
    """The runner's hooks and the helpers the Git contract's tests use (the port's methods only).

    Attributes:
        git: The adapter under test (from `make_git`), fresh for each test.
        repo: A repository made by `make_repository` with `REPO_FILES` committed on `main`.
    """

    OPTIONAL_CAPABILITIES = frozenset({"hooks"})
    git: Git
    repo: Path

    def make_git(self) -> Git:
        """The adapter under test."""
        raise NotImplementedError

    def make_repository(self, path: Path, files: Mapping[str, str], branch: str = "main") -> Path:
        """A repository with a working tree at `path` whose `git` is `self.git`, on `branch`.

        `files` (text by repo-relative path) are committed as one root commit with the message
        `initial`; with no files the branch has no commit yet. Returns `path`.
        """
        raise NotImplementedError

    def install_hook(self, repo: Path, name: str, body: str) -> Path:
        """For `hooks`: install the shell hook `name` (`pre-commit`, ...) that touches a marker file,
        then runs `body`; return the marker's path (outside the working tree)."""
        raise NotImplementedError

    def setup_method(self, method: object = None) -> None:
        super().setup_method(method)
        self.git = self.make_git()
        self.repo = self.make_repository(self.tmp / "repo", REPO_FILES)

    def head(self, rev: str = "HEAD", repo: Path | None = None) -> str:
        """The commit `rev` names (it must name one)."""
        sha = self.git.resolve_commit(repo or self.repo, rev)
        assert sha is not None, f"{rev} names no commit"
        return sha

    def write(self, relative: str, text: str = "", *, root: Path | None = None) -> Path:
        file = (root or self.repo) / relative
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(text, encoding="utf-8")
        return file

    def commit_all(self, message: str = "commit", root: Path | None = None) -> str:
        """Stage every change of the working tree (what `git add -A` would) and commit it."""
        worktree = root or self.repo
        paths: list[str] = []
        for entry in self.git.status(worktree):
            paths += [entry.path, *([entry.original_path] if entry.original_path else [])]
        self.git.sync_index(worktree, paths)
        return self.git.commit(worktree, message, author=AUTHOR, committer=COMMITTER)

    def paths_of(self, root: Path | None = None, *, untracked: bool = True) -> set[str]:
        return {entry.path for entry in self.git.status(root or self.repo, untracked=untracked)}
