"""The Git contract: what the workspace layer relies on, checked through the port's methods only.

Runner hooks: `make_git()` and `make_repository(path, files, branch)`; for the optional `hooks`
capability (running the repository's hooks in `commit(run_hooks=True)`), also `install_hook`.
"""

from __future__ import annotations

import os
import shutil
import threading
import time

from orchestra_core.ports.git import Git, GitError, RefConflictError
from orchestra_core.testing.contracts._base import cases, raises, requires
from orchestra_core.testing.contracts._git_base import AUTHOR, COMMITTER, REPO_FILES, WHEN, GitContractBase
from orchestra_core.testing.contracts._git_captures import GitCaptureContract
from orchestra_core.testing.contracts._git_history import GitHistoryContract
from orchestra_core.testing.contracts._git_lazy import GitLazyContract
from orchestra_core.testing.contracts._git_merges import GitMergeContract

__all__ = ["AUTHOR", "COMMITTER", "REPO_FILES", "WHEN", "GitContract", "GitContractBase"]


class GitContract(GitCaptureContract, GitMergeContract, GitHistoryContract, GitLazyContract):
    """Behaviour every Git adapter has, on repositories it is handed by `make_repository`."""

    # --- repositories --------------------------------------------------------------------------

    def test_is_a_git_port(self) -> None:
        assert isinstance(self.git, Git)

    def test_repository_of_main_checkout_and_linked_worktree(self) -> None:
        git, repo = self.git, self.repo
        git.create_branch(repo, "side", self.head())
        git.worktree_add(repo, self.tmp / "wt", "side")
        main, linked = git.repository(repo), git.repository(self.tmp / "wt")
        assert main.toplevel == repo.resolve() and not main.is_bare
        assert main.common_dir == linked.common_dir == (repo / ".git").resolve()
        assert linked.git_dir != main.git_dir and linked.toplevel == (self.tmp / "wt").resolve()
        assert main.object_format == "sha1"

    def test_repository_of_a_plain_directory_is_an_error(self) -> None:
        (self.tmp / "plain").mkdir()
        with raises(GitError) as caught:
            self.git.repository(self.tmp / "plain")
        assert str(self.tmp / "plain") in str(caught.value)

    def test_resolve_commit(self) -> None:
        git, repo = self.git, self.repo
        head = self.head()
        assert git.resolve_commit(repo, "HEAD") == head
        assert git.resolve_commit(repo, "main") == head
        assert git.resolve_commit(repo, "refs/heads/main") == head
        assert git.resolve_commit(repo, head[:12]) == head
        assert git.resolve_commit(repo, "nope") is None
        assert git.resolve_commit(repo, "HEAD^{tree}") is None
        assert git.resolve_commit(repo, "--all") is None
        empty = self.make_repository(self.tmp / "empty", {})
        assert git.resolve_commit(empty, "HEAD") is None

    def test_current_branch(self) -> None:
        git, repo = self.git, self.repo
        assert git.current_branch(repo) == "main"
        git.create_branch(repo, "side/work", self.head())
        git.worktree_add(repo, self.tmp / "wt", "side/work")
        assert git.current_branch(self.tmp / "wt") == "side/work"
        assert git.current_branch(repo / "src") == "main"

    def test_status_reports_staged_unstaged_untracked_and_renames(self) -> None:
        git, repo = self.git, self.repo
        self.write("README.md", "changed\n")
        self.write("new file ü.txt", "x")
        self.write(".gitignore", "*.log\n")
        self.write("debug.log", "ignored")
        os.rename(repo / "src/app.py", repo / "src/main.py")
        git.sync_index(repo, ["src/app.py", "src/main.py"])
        entries = {entry.path: entry for entry in git.status(repo)}
        assert entries["README.md"].worktree == "M" and entries["README.md"].index == "."
        assert entries["new file ü.txt"].untracked
        assert entries["src/main.py"].index == "R" and entries["src/main.py"].original_path == "src/app.py"
        assert "debug.log" not in entries and "src/app.py" not in entries
        assert "new file ü.txt" not in self.paths_of(untracked=False)

    # --- branches and refs ---------------------------------------------------------------------

    def test_branches_create_and_delete(self) -> None:
        git, repo = self.git, self.repo
        head = self.head()
        git.create_branch(repo, "orchestra/p/abc", head)
        assert git.branches(repo) == ("main", "orchestra/p/abc")
        with raises(RefConflictError):
            git.create_branch(repo, "orchestra/p/abc", head)
        with raises(GitError):
            git.create_branch(repo, "orchestra/p/abc/deeper", head)  # a/b and a/b/c cannot coexist
        git.delete_branch(repo, "orchestra/p/abc")
        assert git.branches(repo) == ("main",)

    @cases(
        session_branch=("orchestra/p/abc", True), double_dot=("a..b", False), space=("a b", False),
        option=("-x", False), hidden_component=("a/.hidden", False), lock_suffix=("x.lock", False),
        head=("HEAD", False), empty=("", False), reflog_syntax=("a@{b", False),
    )  # fmt: skip
    def test_is_valid_branch_name(self, name: str, valid: bool) -> None:
        assert self.git.is_valid_branch_name(self.repo, name) is valid

    def test_update_ref_checks_the_expected_old_value(self) -> None:
        git, repo = self.git, self.repo
        first = self.head()
        self.write("b.txt", "b")
        second = self.commit_all("second")
        with raises(RefConflictError):
            git.update_ref(repo, "refs/heads/main", first, expected_old=first)
        assert self.head("main") == second
        git.update_ref(repo, "refs/heads/main", first, expected_old=second)
        assert self.head("main") == first
        git.update_ref(repo, "refs/heads/main", second, expected_old=None)
        assert self.head("main") == second

    # --- worktrees -----------------------------------------------------------------------------

    def test_worktree_add_list_remove_prune(self) -> None:
        git, repo, wt = self.git, self.repo, self.tmp / "wt"
        git.create_branch(repo, "work", self.head())
        git.worktree_add(repo, wt, "work")
        assert (wt / "src" / "app.py").read_text() == "print('hi')\n"
        listed = git.worktrees(repo)
        assert [w.branch for w in listed] == ["main", "work"]
        assert listed[1].path.resolve() == wt.resolve() and listed[1].head == self.head()
        assert git.status(wt) == ()
        (wt / "junk").write_text("untracked")
        git.worktree_remove(repo, wt)
        assert not wt.exists() and len(git.worktrees(repo)) == 1
        git.worktree_add(repo, self.tmp / "wt2", "work")
        shutil.rmtree(self.tmp / "wt2")
        git.worktree_prune(repo)
        assert len(git.worktrees(repo)) == 1

    def test_worktree_add_detached_checks_out_a_commit_without_a_branch(self) -> None:
        git, repo, wt = self.git, self.repo, self.tmp / "at-first"
        first = self.head()
        self.write("b.txt", "b")
        self.commit_all("later")
        branches = git.branches(repo)
        git.worktree_add_detached(repo, wt, first)
        assert (wt / "src" / "app.py").read_text() == "print('hi')\n" and not (wt / "b.txt").exists()
        listed = git.worktrees(repo)[1]
        assert listed.detached and listed.branch is None and listed.head == first
        assert git.current_branch(wt) is None and git.status(wt) == ()
        assert git.branches(repo) == branches  # no branch was made
        git.worktree_remove(repo, wt)
        assert not wt.exists() and len(git.worktrees(repo)) == 1
        with raises(GitError):
            git.worktree_add_detached(repo, wt, "0" * 40)

    def test_checkout_and_discard_changes(self) -> None:
        git, repo = self.git, self.repo
        base = self.head()
        git.create_branch(repo, "work", base)
        git.checkout(repo, "work")
        assert git.current_branch(repo) == "work"
        self.write("b.txt", "b")
        later = self.commit_all("later")
        self.write("README.md", "dirty\n")
        self.write("untracked/file.txt", "x")
        self.write(".gitignore", "keep.log\n")
        self.write("keep.log", "ignored stays")
        git.discard_changes(repo, base)
        assert self.head("work") == base != later
        assert (repo / "README.md").read_text() == "hello\n" and not (repo / "b.txt").exists()
        assert not (repo / "untracked").exists() and not (repo / ".gitignore").exists()
        assert (repo / "keep.log").exists()  # ignored files are not ours to delete

    def test_add_exclude_is_idempotent(self) -> None:
        assert self.git.add_exclude(self.repo, "/.orchestra/") is True
        assert self.git.add_exclude(self.repo, "/.orchestra/") is False
        self.write(".orchestra/store.db", "x")
        assert self.git.status(self.repo) == ()

    # --- staging and committing ----------------------------------------------------------------

    def test_commit_only_given_paths_with_identities(self) -> None:
        git, repo = self.git, self.repo
        self.write("a.py", "a")
        self.write("other.py", "dirty")
        (repo / "README.md").unlink()
        sha = git.commit(
            repo, "Add a\n\nBody.\n", author=AUTHOR, committer=COMMITTER, paths=["a.py", "README.md"]
        )
        assert sha == self.head()
        assert {(c.path, c.status) for c in git.changed_files(repo, sha)} == {
            ("README.md", "D"),
            ("a.py", "A"),
        }
        entry = git.log(repo, sha, max_count=1)[0]
        assert (entry.author_name, entry.author_email) == ("node (model-x)", "orchestra@local")
        assert (entry.committer_name, entry.committer_email) == ("Orchestra", "orchestra@local")
        assert entry.authored_at == "2026-03-04T05:06:07+02:00" and entry.message == "Add a\n\nBody."
        assert {e.path: e.untracked for e in git.status(repo)} == {"other.py": True}

    def test_commit_without_paths_commits_the_index(self) -> None:
        git, repo = self.git, self.repo
        self.write("a.py", "a")
        self.write("b.py", "b")
        git.sync_index(repo, ["a.py"])
        sha = git.commit(repo, "Add a", author=AUTHOR, committer=COMMITTER)
        assert [(c.path, c.status) for c in git.changed_files(repo, sha)] == [("a.py", "A")]
        assert self.paths_of() == {"b.py"}

    @requires("hooks")
    def test_worktree_add_skips_hooks(self) -> None:
        marker = self.install_hook(self.repo, "post-checkout", "exit 0")
        self.git.create_branch(self.repo, "work", self.head())
        self.git.worktree_add(self.repo, self.tmp / "wt", "work")
        assert not marker.exists()

    @requires("hooks")
    def test_commit_skips_hooks_unless_asked(self) -> None:
        git, repo = self.git, self.repo
        marker = self.install_hook(repo, "pre-commit", "exit 1")
        self.write("a.py", "a")
        git.commit(repo, "Add a", author=AUTHOR, committer=COMMITTER, paths=["a.py"])
        assert not marker.exists()
        self.write("a.py", "b")
        with raises(GitError) as caught:
            git.commit(repo, "Change a", author=AUTHOR, committer=COMMITTER, paths=["a.py"], run_hooks=True)
        assert marker.exists() and "commit" in caught.value.command

    @requires("hooks")
    def test_commit_with_hooks_runs_commit_msg(self) -> None:
        self.install_hook(self.repo, "commit-msg", 'printf "\\nHooked-By: test\\n" >> "$1"')
        self.write("a.py", "a")
        sha = self.git.commit(
            self.repo, "Add a", author=AUTHOR, committer=COMMITTER, paths=["a.py"], run_hooks=True
        )
        assert self.git.trailers(self.repo, sha) == {"Hooked-By": "test"}

    def test_commit_tree_writes_a_commit_without_moving_refs(self) -> None:
        git, repo = self.git, self.repo
        head = self.head()
        tree = git.tree_with_files(repo, head, []).base_tree
        sha = git.commit_tree(
            repo, tree, parents=[head], message="Msg\n\nKey-A: 1\n", author=AUTHOR, committer=COMMITTER
        )
        assert self.head() == head
        entry = git.log(repo, sha, max_count=1)[0]
        assert entry.parents == (head,) and entry.author_name == "node (model-x)"
        assert entry.committer_email == "orchestra@local" and entry.trailers == {"Key-A": "1"}
        assert entry.authored_at == "2026-03-04T05:06:07+02:00" and entry.subject == "Msg"

    def test_sync_index_keeps_status_clean_after_a_ref_move(self) -> None:
        git, repo = self.git, self.repo
        head = self.head()
        self.write("src/app.py", "print('changed')\n")
        self.write("new.txt", "n")
        (repo / "README.md").unlink()
        paths = ["src/app.py", "new.txt", "README.md"]
        change = git.tree_with_files(repo, head, paths)
        sha = git.commit_tree(
            repo, change.tree, parents=[head], message="m", author=AUTHOR, committer=COMMITTER
        )
        git.update_ref(repo, "refs/heads/main", sha, expected_old=head)
        assert git.status(repo) != ()
        git.sync_index(repo, paths)
        assert git.status(repo) == ()

    def test_ignored_paths_are_untracked_ignored_only(self) -> None:
        git, repo = self.git, self.repo
        self.write(".gitignore", "*.log\nbuild/\n")
        self.write("tracked.log", "t")
        self.write("logs/kept.log", "k")
        git.sync_index(repo, ["tracked.log", "logs/kept.log"])  # staging named paths takes ignored files too
        git.commit(repo, "track logs", author=AUTHOR, committer=COMMITTER)
        self.write("debug.log", "d")
        self.write("build/out.o", "o")
        self.write(":(glob)*.log", "odd name")
        paths = ["debug.log", "tracked.log", "logs/kept.log", "build/out.o", "src/app.py", ":(glob)*.log"]
        assert sorted(git.ignored_paths(repo, paths)) == [":(glob)*.log", "build/out.o", "debug.log"]
        assert git.ignored_paths(repo, []) == ()

    def test_untracked_matching_lists_untracked_files_matching_the_patterns_only(self) -> None:
        git, repo = self.git, self.repo
        self.write(".gitignore", "*.env\nlocal/\n")
        self.write("tracked.env", "t")
        git.sync_index(repo, [".gitignore", "tracked.env"])
        git.commit(repo, "track one env file", author=AUTHOR, committer=COMMITTER)
        self.write(".env", "SECRET=1")
        self.write("prod.env", "p")
        self.write("local/settings.json", "{}")
        self.write("local/deep/more.json", "{}")
        self.write("notes.txt", "untracked, not matched")
        self.write("keep.env.bak", "not matched")
        os.symlink("prod.env", self.repo / "link.env")
        patterns = ["# the agents' local config", ".env", "*.env", "local/", "!prod.env", ""]
        assert sorted(git.untracked_matching(repo, patterns)) == [
            ".env", "link.env", "local/deep/more.json", "local/settings.json",
        ]
        assert git.untracked_matching(repo, []) == ()
        assert git.untracked_matching(repo, ["*.txt"]) == ("notes.txt",)

    # --- locking -------------------------------------------------------------------------------

    def test_lock_is_reentrant(self) -> None:
        with self.git.lock(self.repo), self.git.lock(self.repo):
            self.git.update_ref(self.repo, "refs/heads/other", self.head(), expected_old=None)
        assert self.git.resolve_commit(self.repo, "other") == self.head()

    def test_lock_excludes_other_threads(self) -> None:
        entered = threading.Event()

        def contender() -> None:
            with self.git.lock(self.repo):
                entered.set()

        with self.git.lock(self.tmp / "repo" / "src"):  # any path in the repository names its lock
            thread = threading.Thread(target=contender)
            thread.start()
            time.sleep(0.2)
            assert not entered.is_set()
        thread.join(timeout=10)
        assert entered.is_set()
