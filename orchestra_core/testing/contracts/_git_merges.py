"""The Git contract, merges: `merge_tree` (no worktree touched) and `checkout_tree` (a worktree follows its
moved branch)."""

from __future__ import annotations

from orchestra_core.ports.git import GitError
from orchestra_core.testing.contracts._base import raises
from orchestra_core.testing.contracts._git_base import AUTHOR, COMMITTER, GitContractBase


class GitMergeContract(GitContractBase):
    """`merge_tree` and `checkout_tree`."""

    def _branch_with(self, name: str, files: dict[str, str | None], base: str = "HEAD") -> str:
        """A commit on a new branch `name` from `base` writing (None: deleting) `files`, made in a worktree."""
        git = self.git
        git.create_branch(self.repo, name, self.head(base))
        worktree = self.tmp / f"wt-{name}"
        git.worktree_add(self.repo, worktree, name)
        for path, text in files.items():
            if text is None:
                (worktree / path).unlink()
            else:
                self.write(path, text, root=worktree)
        git.sync_index(worktree, list(files))
        sha = git.commit(worktree, f"{name} work", author=AUTHOR, committer=COMMITTER)
        git.worktree_remove(self.repo, worktree)
        return sha

    def test_merge_tree_of_changes_to_different_files_is_clean(self) -> None:
        git, repo = self.git, self.repo
        left = self._branch_with("left", {"left.txt": "L\n", "README.md": "hello\nleft\n"})
        right = self._branch_with("right", {"right.txt": "R\n"})
        head, status = self.head(), git.status(repo)
        result = git.merge_tree(repo, left, right)
        assert result.clean and result.conflicts == () and result.conflicted_paths == ()
        merge = git.commit_tree(
            repo, result.tree, parents=[left, right], message="merge", author=AUTHOR, committer=COMMITTER
        )
        assert [c.path for c in git.changed_files(repo, merge)] == ["right.txt"]  # against the first parent
        assert "+R" in git.diff(repo, left, merge) and "+left" not in git.diff(repo, left, merge)
        assert self.head() == head and git.status(repo) == status  # nothing moved, nothing checked out

    def test_merge_tree_of_the_same_line_changed_twice_conflicts_with_markers(self) -> None:
        git, repo = self.git, self.repo
        left = self._branch_with("left", {"README.md": "from left\n", "a.txt": "a\n"})
        right = self._branch_with("right", {"README.md": "from right\n"})
        head = self.head()
        result = git.merge_tree(repo, left, right)
        assert not result.clean and result.conflicted_paths == ("README.md",)
        [conflict] = result.conflicts
        assert conflict.text.startswith("<<<<<<< ")
        assert "from left\n" in conflict.text and "=======\n" in conflict.text and "from right\n" in conflict.text
        assert ">>>>>>> " in conflict.text
        assert any("README.md" in message for message in result.messages)
        assert self.head() == head and git.resolve_commit(repo, "left") == left

    def test_merge_tree_of_a_modify_delete_conflict_keeps_the_modified_file(self) -> None:
        git, repo = self.git, self.repo
        left = self._branch_with("left", {"README.md": "changed\n"})
        right = self._branch_with("right", {"README.md": None})
        result = git.merge_tree(repo, left, right)
        assert not result.clean and result.conflicted_paths == ("README.md",)
        assert "changed" in result.conflicts[0].text

    def test_merge_tree_of_an_ancestor_is_the_descendant_tree(self) -> None:
        git, repo = self.git, self.repo
        right = self._branch_with("right", {"right.txt": "R\n"})
        result = git.merge_tree(repo, self.head(), right)
        assert result.clean
        merge = git.commit_tree(
            repo, result.tree, parents=[right], message="m", author=AUTHOR, committer=COMMITTER
        )
        assert git.changed_files(repo, merge) == ()

    def test_merge_tree_of_a_bad_name_or_unrelated_histories_is_a_git_error(self) -> None:
        git, repo = self.git, self.repo
        with raises(GitError):
            git.merge_tree(repo, "HEAD", "no-such-branch")
        orphan_tree = git.merge_tree(repo, "HEAD", "HEAD").tree
        orphan = git.commit_tree(
            repo, orphan_tree, parents=[], message="orphan", author=AUTHOR, committer=COMMITTER
        )
        with raises(GitError):
            git.merge_tree(repo, "HEAD", orphan)

    def test_checkout_tree_brings_a_worktree_to_its_moved_branch(self) -> None:
        git, repo = self.git, self.repo
        git.create_branch(repo, "session", self.head())
        worktree = self.tmp / "session-wt"
        git.worktree_add(repo, worktree, "session")
        old = self.head("session")
        changes = {"src/app.py": "print('new')\n", "added/file.txt": "x\n", "README.md": None}
        new = self._branch_with("work", changes)
        self.write("notes.txt", "untracked\n", root=worktree)
        git.update_ref(repo, "refs/heads/session", new, expected_old=old)
        git.checkout_tree(worktree, old, new)
        assert (worktree / "src/app.py").read_text(encoding="utf-8") == "print('new')\n"
        assert (worktree / "added/file.txt").exists() and not (worktree / "README.md").exists()
        assert (worktree / "notes.txt").exists()  # untracked files stay
        assert {entry.path for entry in git.status(worktree)} == {"notes.txt"}

    def test_checkout_tree_refuses_to_overwrite_a_local_change(self) -> None:
        git, repo = self.git, self.repo
        git.create_branch(repo, "session", self.head())
        worktree = self.tmp / "session-wt"
        git.worktree_add(repo, worktree, "session")
        old = self.head("session")
        new = self._branch_with("work", {"README.md": "theirs\n"})
        self.write("README.md", "local edit\n", root=worktree)
        with raises(GitError):
            git.checkout_tree(worktree, old, new)
        assert (worktree / "README.md").read_text(encoding="utf-8") == "local edit\n"
