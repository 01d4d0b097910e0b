"""The Git contract, part one: history (log, trailers, changed files, diffs), config and index-free trees."""

from __future__ import annotations

import os

from orchestra_core.ports.git import GitError
from orchestra_core.testing.contracts._base import raises
from orchestra_core.testing.contracts._git_base import AUTHOR, COMMITTER, EMPTY_TREE, GitContractBase


class GitHistoryContract(GitContractBase):
    """History, configuration and `tree_with_files`; `GitContract` adds the rest of the port."""

    # --- history -------------------------------------------------------------------------------

    def test_log_and_trailers(self) -> None:
        git, repo = self.git, self.repo
        self.write("x", "1")
        message = "Subject line\n\nBody text.\n\nOrchestra-Node: plan\nOrchestra-Turn: 2"
        git.commit(repo, message, author=AUTHOR, committer=COMMITTER, paths=["x"])
        entries = git.log(repo, "HEAD")
        assert [e.subject for e in entries] == ["Subject line", "initial"]
        assert entries[0].message.startswith("Subject line\n\nBody text.")
        assert entries[0].trailers == {"Orchestra-Node": "plan", "Orchestra-Turn": "2"}
        assert git.trailers(repo, "HEAD") == {"Orchestra-Node": "plan", "Orchestra-Turn": "2"}
        assert git.trailers(repo, "HEAD~1") == {}
        assert len(git.log(repo, "HEAD", max_count=1)) == 1

    def test_changed_files_against_first_parent_and_of_a_root_commit(self) -> None:
        git, repo = self.git, self.repo
        root = self.head()
        self.write("src/app.py", "print('bye')\n")
        self.write("new dir/ünï.txt", "x")
        (repo / "README.md").unlink()
        later = self.commit_all("later")
        assert {(c.path, c.status) for c in git.changed_files(repo, later)} == {
            ("src/app.py", "M"),
            ("new dir/ünï.txt", "A"),
            ("README.md", "D"),
        }
        assert {c.path for c in git.changed_files(repo, root)} == {"README.md", "src/app.py"}
        assert {c.status for c in git.changed_files(repo, root)} == {"A"}
        git.create_branch(repo, "side", root)
        git.worktree_add(repo, self.tmp / "side", "side")
        self.write("side.txt", "s", root=self.tmp / "side")
        side = git.commit(self.tmp / "side", "side", author=AUTHOR, committer=COMMITTER, paths=["side.txt"])
        self.write("side.txt", "s")
        merged = git.tree_with_files(repo, later, ["side.txt"]).tree
        merge = git.commit_tree(
            repo, merged, parents=[later, side], message="merge", author=AUTHOR, committer=COMMITTER
        )
        git.update_ref(repo, "refs/heads/main", merge, expected_old=later)
        assert [c.path for c in git.changed_files(repo, "HEAD")] == ["side.txt"]
        assert git.log(repo, "HEAD", max_count=1)[0].parents == (later, side)

    def test_diff_between_commits_against_worktree_and_staged(self) -> None:
        git, repo = self.git, self.repo
        base = self.head()
        self.write("src/app.py", "print('bye')\n")
        git.sync_index(repo, ["src/app.py"])
        staged = git.diff(repo)
        assert "diff --git a/src/app.py b/src/app.py" in staged and "+print('bye')" in staged
        self.write("README.md", "worktree change\n")
        assert "+worktree change" in git.diff(repo, base, paths=["README.md"])
        assert "README" not in git.diff(repo, base, paths=["src/app.py"])
        later = self.commit_all("later")
        assert "-print('hi')" in git.diff(repo, base, later)

    def test_config_values_are_added_once_and_shared_by_worktrees(self) -> None:
        git, repo = self.git, self.repo
        assert git.config_values(repo, "orchestra.project") == ()
        assert git.add_config_value(repo, "orchestra.project", "/p/one")
        assert git.add_config_value(repo, "orchestra.project", "/p/two words")
        assert not git.add_config_value(repo, "orchestra.project", "/p/one")
        git.create_branch(repo, "side", self.head())
        git.worktree_add(repo, self.tmp / "wt", "side")
        assert git.config_values(self.tmp / "wt", "orchestra.project") == ("/p/one", "/p/two words")
        assert git.config_values(repo, "orchestra.project") == ("/p/one", "/p/two words")

    # --- the fast path: trees without an index -------------------------------------------------

    def test_tree_with_files_takes_exactly_the_listed_paths(self) -> None:
        git, repo = self.git, self.repo
        self.write("docs/a/b/deep.md", "deep")
        self.write("f", "file becomes dir")
        self.write("d/inner.txt", "dir becomes file")
        base = self.commit_all("more")
        self.write("src/app.py", "print('changed')\n")
        self.write("new/nested/file.txt", "n")
        (repo / "docs/a/b/deep.md").unlink()
        (repo / "f").unlink()
        self.write("f/g", "g")
        (repo / "d/inner.txt").unlink()
        (repo / "d").rmdir()
        self.write("d", "now a file")
        (repo / "README.md").chmod(0o755)
        os.symlink("src/app.py", repo / "link")
        self.write("not-listed.txt", "left alone")
        paths = ["src/app.py", "new/nested/file.txt", "docs/a/b/deep.md", "f", "f/g", "d/inner.txt", "d",
                 "README.md", "link", "never/existed"]  # fmt: skip
        change = git.tree_with_files(repo, base, paths)
        assert change.base_commit == base and change.base_tree == git.tree_with_files(repo, base, []).tree
        assert change.changed
        commit = git.commit_tree(
            repo, change.tree, parents=[base], message="m", author=AUTHOR, committer=COMMITTER
        )
        assert {(c.path, c.status) for c in git.changed_files(repo, commit)} == {
            ("src/app.py", "M"), ("new/nested/file.txt", "A"), ("docs/a/b/deep.md", "D"), ("f", "D"),
            ("f/g", "A"), ("d/inner.txt", "D"), ("d", "A"), ("README.md", "M"), ("link", "A"),
        }  # fmt: skip
        diff = git.diff(repo, change.base_tree, change.tree, paths=["README.md", "link"])
        assert "new mode 100755" in diff and "new file mode 120000" in diff and "+src/app.py" in diff

    def test_tree_with_files_unchanged_and_ref_base(self) -> None:
        change = self.git.tree_with_files(self.repo, "refs/heads/main", ["README.md", "gone.txt"])
        assert change.base_commit == self.head() and not change.changed

    def test_tree_with_files_can_empty_the_tree(self) -> None:
        (self.repo / "README.md").unlink()
        (self.repo / "src/app.py").unlink()
        assert self.git.tree_with_files(self.repo, "HEAD", ["README.md", "src/app.py"]).tree == EMPTY_TREE

    def test_tree_with_files_respects_core_filemode_false(self) -> None:
        git, repo = self.git, self.repo
        assert git.add_config_value(repo, "core.fileMode", "false")
        (repo / "src/app.py").chmod(0o755)
        self.write("src/app.py", "changed\n")
        change = git.tree_with_files(repo, "HEAD", ["src/app.py"])
        diff = git.diff(repo, change.base_tree, change.tree)
        assert "+changed" in diff and "new mode" not in diff

    def test_tree_with_files_sorts_like_git(self) -> None:
        paths = ["a-b", "a.b", "a/x", "a0", "a/y", "ab"]
        for name in paths:
            self.write(name, name)
        tree = self.git.tree_with_files(self.repo, "HEAD", paths).tree
        self.git.sync_index(self.repo, paths)
        staged = self.git.commit(self.repo, "staged", author=AUTHOR, committer=COMMITTER)
        assert self.git.tree_with_files(self.repo, staged, []).tree == tree

    def test_tree_with_files_refuses_unclean_paths(self) -> None:
        for bad in ["../x", "/abs", ".git/config", "a//b", ".Git/config", "x/.git./y", "GIT~1/hooks", ".git "]:
            with raises(GitError):
                self.git.tree_with_files(self.repo, "HEAD", [bad])

    def test_tree_with_files_takes_odd_names_intact(self) -> None:
        names = ["new\nline.txt", "tab\there.txt", "quote'\"s.txt", "-dash.txt", "sp ace.txt", "naïve.txt"]
        for name in names:
            self.write(name, f"{name}\n")
        (self.repo / "dir\nwith break").mkdir()
        self.write("dir\nwith break/inner.txt", "inner\n")
        change = self.git.tree_with_files(self.repo, "HEAD", [*names, "dir\nwith break/inner.txt"])
        commit = self.git.commit_tree(
            self.repo, change.tree, parents=[self.head()], message="odd", author=AUTHOR, committer=COMMITTER
        )
        changed = {c.path for c in self.git.changed_files(self.repo, commit)}
        assert changed == {*names, "dir\nwith break/inner.txt"}
