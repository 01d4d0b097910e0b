"""The Git contract for captured versions: files stored as blobs when written, trees and commits built from them
later, whatever the files hold by then (a turn's commit holds that turn's writes)."""

from __future__ import annotations

import os

from orchestra_core.model.turn import FileVersion
from orchestra_core.ports.git import GitError
from orchestra_core.testing.contracts._base import raises, requires
from orchestra_core.testing.contracts._git_base import AUTHOR, COMMITTER, GitContractBase


class GitCaptureContract(GitContractBase):
    """`capture_files`, and `tree_with_files`, `sync_index` and `commit` given captured versions."""

    def _commit_of(self, change_tree: str, base: str) -> str:
        return self.git.commit_tree(
            self.repo, change_tree, parents=[base], message="m", author=AUTHOR, committer=COMMITTER
        )

    def _text_at(self, rev: str, path: str) -> str:
        """A file's text at `rev`, read from a detached worktree made through the port."""
        checkout = self.tmp / f"at-{rev[:12]}"
        if not checkout.exists():
            self.git.worktree_add_detached(self.repo, checkout, rev)
        return (checkout / path).read_text(encoding="utf-8")

    def test_a_captured_version_is_committed_whatever_the_file_holds_later(self) -> None:
        git, repo = self.git, self.repo
        self.write("a.py", "A = 1\n")
        captured = git.capture_files(repo, ["a.py", "README.md"])
        assert set(captured) == {"a.py", "README.md"} and not captured["a.py"].deleted
        self.write("a.py", "A = 3\n")
        self.write("README.md", "changed later\n")
        base = self.head()
        change = git.tree_with_files(repo, base, ["a.py", "README.md"], {"a.py": captured["a.py"]})
        commit = self._commit_of(change.tree, base)
        assert self._text_at(commit, "a.py") == "A = 1\n"
        assert self._text_at(commit, "README.md") == "changed later\n"  # not captured: read when built

    def test_a_capture_of_a_missing_file_deletes_it_and_directories_are_left_out(self) -> None:
        git, repo = self.git, self.repo
        (repo / "README.md").unlink()
        captured = git.capture_files(repo, ["README.md", "src", "never/existed"])
        assert captured == {"README.md": FileVersion(), "never/existed": FileVersion()}
        self.write("README.md", "back again\n")
        change = git.tree_with_files(repo, "HEAD", ["README.md"], captured)
        assert {c.path: c.status for c in git.changed_files(repo, self._commit_of(change.tree, self.head()))} == {
            "README.md": "D"
        }

    def test_captured_modes_follow_the_file(self) -> None:
        git, repo = self.git, self.repo
        self.write("run.sh", "#!/bin/sh\n")
        (repo / "run.sh").chmod(0o755)
        os.symlink("src/app.py", repo / "link")
        captured = git.capture_files(repo, ["run.sh", "link"])
        assert captured["run.sh"].mode == "100755" and captured["link"].mode == "120000"
        (repo / "run.sh").chmod(0o644)
        change = git.tree_with_files(repo, "HEAD", ["run.sh", "link"], captured)
        diff = git.diff(repo, change.base_tree, change.tree)
        assert "new file mode 100755" in diff and "new file mode 120000" in diff

    def test_captured_modes_respect_core_filemode_false(self) -> None:
        git, repo = self.git, self.repo
        assert git.add_config_value(repo, "core.fileMode", "false")
        (repo / "src/app.py").chmod(0o755)
        self.write("src/app.py", "changed\n")
        kept = git.tree_with_files(repo, "HEAD", ["src/app.py"], git.capture_files(repo, ["src/app.py"]))
        assert "new mode" not in git.diff(repo, kept.base_tree, kept.tree)

    def test_capture_refuses_unclean_paths(self) -> None:
        for bad in ["../x", "/abs", ".git/config", ".Git/config"]:
            with raises(GitError):
                self.git.capture_files(self.repo, [bad])

    def test_sync_index_with_versions_stages_them_and_leaves_later_changes_unstaged(self) -> None:
        git, repo = self.git, self.repo
        self.write("a.py", "A = 1\n")
        captured = git.capture_files(repo, ["a.py", "README.md"])
        self.write("a.py", "A = 3\n")
        (repo / "README.md").unlink()
        git.sync_index(repo, ["a.py"], captured)
        committed = git.commit(repo, "Add a", author=AUTHOR, committer=COMMITTER)
        assert self._text_at(committed, "a.py") == "A = 1\n"
        assert {(e.path, e.index, e.worktree) for e in git.status(repo)} == {
            ("a.py", ".", "M"),
            ("README.md", ".", "D"),
        }

    def test_commit_with_versions_commits_them_and_only_them(self) -> None:
        git, repo = self.git, self.repo
        self.write("a.py", "A = 1\n")
        captured = git.capture_files(repo, ["a.py"])
        self.write("a.py", "A = 3\n")
        self.write("staged.txt", "staged by someone else\n")
        git.sync_index(repo, ["staged.txt"])
        sha = git.commit(repo, "Add a", author=AUTHOR, committer=COMMITTER, paths=["a.py"], versions=captured)
        assert self._text_at(sha, "a.py") == "A = 1\n"
        assert {c.path for c in git.changed_files(repo, sha)} == {"a.py"}
        assert ("a.py", ".", "M") in {(e.path, e.index, e.worktree) for e in git.status(repo)}

    @requires("hooks")
    def test_commit_with_versions_runs_hooks_on_them(self) -> None:
        git, repo = self.git, self.repo
        marker = self.install_hook(repo, "pre-commit", "exit 0")
        self.write("a.py", "A = 1\n")
        captured = git.capture_files(repo, ["a.py"])
        self.write("a.py", "A = 3\n")
        sha = git.commit(
            repo, "Add a", author=AUTHOR, committer=COMMITTER, paths=["a.py"], run_hooks=True, versions=captured
        )
        assert marker.exists() and self._text_at(sha, "a.py") == "A = 1\n"
