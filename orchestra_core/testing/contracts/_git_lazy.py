"""The Git contract, lazy worktrees: what a worktree made by `worktree_add_lazy` shows through the port is the
branch's tree, whatever an adapter leaves unwritten."""

from __future__ import annotations

from pathlib import Path

from orchestra_core.testing.contracts._git_base import AUTHOR, COMMITTER, REPO_FILES, GitContractBase


class GitLazyContract(GitContractBase):
    """`worktree_add_lazy`, `tree_files` and `materialize`."""

    def _lazy(self, name: str = "lazy") -> Path:
        self.git.create_branch(self.repo, name, self.head())
        worktree = self.tmp / name
        self.git.worktree_add_lazy(self.repo, worktree, name)
        return worktree

    def _tracked(self, worktree: Path, relative: str) -> str:
        """A tracked file's text: on disk, else from the worktree's tree files."""
        if (worktree / relative).exists():
            return (worktree / relative).read_text()
        files = self.git.tree_files(worktree)
        assert files is not None, f"{relative} is neither on disk nor readable from git's objects"
        entry = files.entry(relative)
        assert entry is not None and entry.is_file
        try:
            return files.read(entry).decode()
        finally:
            files.close()

    def test_a_lazy_worktree_shows_the_branch_tree_and_no_change(self) -> None:
        worktree = self._lazy()
        assert self.git.current_branch(worktree) == "lazy"
        assert self.git.status(worktree) == ()
        assert {path: self._tracked(worktree, path) for path in REPO_FILES} == REPO_FILES
        files = self.git.tree_files(worktree)
        if files is not None:
            assert files.is_directory("src") and not files.is_directory("README.md")
            assert [entry.path for entry in files.entries_under("")] == sorted(
                path for path in REPO_FILES if not (worktree / path).exists()
            )
            assert files.entry("nope") is None
            files.close()

    def test_a_commit_in_a_lazy_worktree_holds_only_what_was_written(self) -> None:
        worktree = self._lazy()
        assert self._tracked(worktree, "README.md") == REPO_FILES["README.md"]
        self.write("src/app.py", "print('lazy')\n", root=worktree)
        self.write("new.txt", "new\n", root=worktree)
        sha = self.git.commit(worktree, "work", author=AUTHOR, committer=COMMITTER, paths=["src/app.py", "new.txt"])
        assert {(c.path, c.status) for c in self.git.changed_files(worktree, sha)} == {("src/app.py", "M"), ("new.txt", "A")}
        assert self.git.status(worktree) == ()
        self.write("src/app.py", "print('again')\n", root=worktree)
        self.write("README.md", "written, not committed\n", root=worktree)
        assert [entry.path for entry in self.git.status(worktree)] == ["README.md", "src/app.py"]

    def test_materialize_writes_every_file_and_keeps_written_ones(self) -> None:
        worktree = self._lazy()
        self.write("README.md", "mine\n", root=worktree)
        self.git.sync_index(worktree, ["README.md"])
        self.git.materialize(worktree)
        assert (worktree / "src" / "app.py").read_text() == REPO_FILES["src/app.py"]
        assert (worktree / "README.md").read_text() == "mine\n"
        assert self.git.tree_files(worktree) is None
        assert self.git.materialize(worktree) is False
        assert [(entry.path, entry.index) for entry in self.git.status(worktree)] == [("README.md", "M")]

    def test_checkout_tree_moves_a_lazy_worktree(self) -> None:
        worktree = self._lazy()
        first = self.head()
        self.write("src/app.py", "print('later')\n")
        later = self.commit_all("later")
        self.git.update_ref(self.repo, "refs/heads/lazy", later, expected_old=first)
        self.git.checkout_tree(worktree, first, later)
        assert self._tracked(worktree, "src/app.py") == "print('later')\n"
        assert self.git.status(worktree) == ()
