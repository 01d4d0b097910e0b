"""Contract of the Git port, run against SubprocessGit with real temporary repositories."""

from __future__ import annotations

import os
import shutil
import stat
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from orchestra_adapters.git import SubprocessGit
from orchestra_core.ports.git import Git, GitError, Identity, RefConflictError
from tests.support.git_repos import GitRepo, make_repo

WHEN = datetime(2026, 3, 4, 5, 6, 7, tzinfo=timezone(timedelta(hours=2)))
AUTHOR = Identity("node (model-x)", "orchestra@local", WHEN)
COMMITTER = Identity("Orchestra", "orchestra@local", WHEN)
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


class GitContract:
    """Behaviour every Git adapter must have; subclasses provide the `git` fixture."""

    @pytest.fixture
    def git(self) -> Git:
        raise NotImplementedError

    @pytest.fixture
    def repo(self, tmp_path: Path) -> GitRepo:
        return make_repo(tmp_path / "repo", {"README.md": "hello\n", "src/app.py": "print('hi')\n"})

    # --- repositories ----------------------------------------------------------------------------

    def test_is_a_git_port(self, git: Git) -> None:
        assert isinstance(git, Git)

    def test_repository_of_main_checkout_and_linked_worktree(
        self, git: Git, repo: GitRepo, tmp_path: Path
    ) -> None:
        repo.git("branch", "side")
        repo.git("worktree", "add", "--quiet", str(tmp_path / "wt"), "side")
        main, linked = git.repository(repo.path), git.repository(tmp_path / "wt")
        assert main.toplevel == repo.path.resolve() and not main.is_bare
        assert main.common_dir == linked.common_dir == (repo.path / ".git").resolve()
        assert linked.git_dir != main.git_dir and linked.toplevel == (tmp_path / "wt").resolve()
        assert main.object_format == "sha1"

    def test_repository_of_bare_repo_and_non_repo(self, git: Git, tmp_path: Path, repo: GitRepo) -> None:
        repo.git("clone", "--quiet", "--bare", str(repo.path), str(tmp_path / "bare.git"))
        assert git.repository(tmp_path / "bare.git").is_bare
        (tmp_path / "plain").mkdir()
        with pytest.raises(GitError) as caught:
            git.repository(tmp_path / "plain")
        assert str(tmp_path / "plain") in str(caught.value) and "rev-parse" in str(caught.value)
        assert "not a git repository" in caught.value.stderr

    def test_resolve_commit(self, git: Git, repo: GitRepo, tmp_path: Path) -> None:
        repo.git("tag", "-a", "v1", "-m", "tag")
        head = repo.head()
        assert git.resolve_commit(repo.path, "HEAD") == head
        assert git.resolve_commit(repo.path, "main") == head
        assert git.resolve_commit(repo.path, "v1") == head  # annotated tag peeled to its commit
        assert git.resolve_commit(repo.path, "nope") is None
        assert git.resolve_commit(repo.path, "HEAD^{tree}") is None
        assert git.resolve_commit(repo.path, "--all") is None
        empty = make_repo(tmp_path / "empty", {})
        assert git.resolve_commit(empty.path, "HEAD") is None

    def test_current_branch(self, git: Git, repo: GitRepo, tmp_path: Path) -> None:
        assert git.current_branch(repo.path) == "main"
        repo.git("worktree", "add", "--quiet", "-b", "side/work", str(tmp_path / "wt"))
        assert git.current_branch(tmp_path / "wt") == "side/work"
        assert git.current_branch(repo.path / "src") == "main"
        repo.git("checkout", "--quiet", "--detach")
        assert git.current_branch(repo.path) is None
        repo.git("-C", str(tmp_path / "wt"), "checkout", "--quiet", "--detach")
        assert git.current_branch(tmp_path / "wt") is None

    def test_status_reports_staged_unstaged_untracked_and_renames(self, git: Git, repo: GitRepo) -> None:
        repo.write("README.md", "changed\n")
        repo.write("new file ü.txt", "x")
        repo.write(".gitignore", "*.log\n")
        repo.write("debug.log", "ignored")
        repo.git("mv", "src/app.py", "src/main.py")
        entries = {entry.path: entry for entry in git.status(repo.path)}
        assert entries["README.md"].worktree == "M" and entries["README.md"].index == "."
        assert entries["new file ü.txt"].untracked
        assert entries["src/main.py"].index == "R" and entries["src/main.py"].original_path == "src/app.py"
        assert "debug.log" not in entries
        assert "new file ü.txt" not in {e.path for e in git.status(repo.path, untracked=False)}

    # --- branches and refs -----------------------------------------------------------------------

    def test_branches_create_and_delete(self, git: Git, repo: GitRepo) -> None:
        head = repo.head()
        git.create_branch(repo.path, "orchestra/p/abc", head)
        assert git.branches(repo.path) == ("main", "orchestra/p/abc")
        with pytest.raises(RefConflictError):
            git.create_branch(repo.path, "orchestra/p/abc", head)
        with pytest.raises(GitError):
            git.create_branch(repo.path, "orchestra/p/abc/deeper", head)  # a/b and a/b/c cannot coexist
        git.delete_branch(repo.path, "orchestra/p/abc")
        assert git.branches(repo.path) == ("main",)

    @pytest.mark.parametrize(
        ("name", "valid"),
        [("orchestra/p/abc", True), ("a..b", False), ("a b", False), ("-x", False), ("a/.hidden", False),
         ("x.lock", False), ("HEAD", False), ("", False), ("a@{b", False)],
    )  # fmt: skip
    def test_is_valid_branch_name(self, git: Git, repo: GitRepo, name: str, valid: bool) -> None:
        assert git.is_valid_branch_name(repo.path, name) is valid

    def test_update_ref_checks_the_expected_old_value(self, git: Git, repo: GitRepo) -> None:
        first = repo.head()
        repo.write("b.txt", "b")
        second = repo.commit_all("second")
        with pytest.raises(RefConflictError) as caught:
            git.update_ref(repo.path, "refs/heads/main", first, expected_old=first)
        assert "update-ref" in str(caught.value)
        assert repo.head("main") == second
        git.update_ref(repo.path, "refs/heads/main", first, expected_old=second)
        assert repo.head("main") == first
        git.update_ref(repo.path, "refs/heads/main", second, expected_old=None)
        assert repo.head("main") == second

    # --- worktrees -------------------------------------------------------------------------------

    def test_worktree_add_list_remove_prune(self, git: Git, repo: GitRepo, tmp_path: Path) -> None:
        git.create_branch(repo.path, "work", repo.head())
        git.worktree_add(repo.path, tmp_path / "wt", "work")
        assert (tmp_path / "wt" / "src" / "app.py").read_text() == "print('hi')\n"
        listed = git.worktrees(repo.path)
        assert [w.branch for w in listed] == ["main", "work"]
        assert listed[1].path.resolve() == (tmp_path / "wt").resolve() and listed[1].head == repo.head()
        assert git.status(tmp_path / "wt") == ()
        (tmp_path / "wt" / "junk").write_text("untracked")
        git.worktree_remove(repo.path, tmp_path / "wt")
        assert not (tmp_path / "wt").exists() and len(git.worktrees(repo.path)) == 1
        git.worktree_add(repo.path, tmp_path / "wt2", "work")
        shutil.rmtree(tmp_path / "wt2")
        git.worktree_prune(repo.path)
        assert len(git.worktrees(repo.path)) == 1

    def test_worktree_add_skips_hooks(self, git: Git, repo: GitRepo, tmp_path: Path) -> None:
        marker = _install_hook(repo, "post-checkout", "exit 0")
        git.create_branch(repo.path, "work", repo.head())
        git.worktree_add(repo.path, tmp_path / "wt", "work")
        assert not marker.exists()

    def test_checkout_and_discard_changes(self, git: Git, repo: GitRepo) -> None:
        base = repo.head()
        git.create_branch(repo.path, "work", base)
        git.checkout(repo.path, "work")
        assert git.current_branch(repo.path) == "work"
        repo.write("b.txt", "b")
        later = repo.commit_all("later")
        repo.write("README.md", "dirty\n")
        repo.write("untracked/file.txt", "x")
        repo.write(".gitignore", "keep.log\n")
        repo.write("keep.log", "ignored stays")
        git.discard_changes(repo.path, base)
        assert repo.head("work") == base != later
        assert (repo.path / "README.md").read_text() == "hello\n"
        assert not (repo.path / "untracked").exists() and not (repo.path / ".gitignore").exists()
        assert (repo.path / "keep.log").exists()  # ignored files are not ours to delete

    def test_add_exclude_is_idempotent(self, git: Git, repo: GitRepo) -> None:
        exclude = repo.path / ".git" / "info" / "exclude"
        exclude.unlink(missing_ok=True)
        assert git.add_exclude(repo.path, "/.orchestra/") is True
        assert git.add_exclude(repo.path, "/.orchestra/") is False
        assert exclude.read_text().splitlines().count("/.orchestra/") == 1
        repo.write(".orchestra/store.db", "x")
        assert repo.status() == ""

    # --- staging and committing ------------------------------------------------------------------

    def test_commit_only_given_paths_with_identities(self, git: Git, repo: GitRepo) -> None:
        repo.write("a.py", "a")
        repo.write("other.py", "dirty")
        (repo.path / "README.md").unlink()
        sha = git.commit(
            repo.path, "Add a\n\nBody.\n", author=AUTHOR, committer=COMMITTER, paths=["a.py", "README.md"]
        )
        assert sha == repo.head()
        assert repo.git("show", "--name-status", "--format=", sha).split("\n")[:-1] == [
            "D\tREADME.md",
            "A\ta.py",
        ]
        assert repo.log(sha, "%an <%ae>|%cn <%ce>|%aI")[0] == (
            "node (model-x) <orchestra@local>|Orchestra <orchestra@local>|2026-03-04T05:06:07+02:00"
        )
        assert "?? other.py" in repo.status()

    def test_commit_skips_hooks_unless_asked(self, git: Git, repo: GitRepo) -> None:
        marker = _install_hook(repo, "pre-commit", "exit 1")
        repo.write("a.py", "a")
        git.commit(repo.path, "Add a", author=AUTHOR, committer=COMMITTER, paths=["a.py"])
        assert not marker.exists()
        repo.write("a.py", "b")
        with pytest.raises(GitError) as caught:
            git.commit(
                repo.path, "Change a", author=AUTHOR, committer=COMMITTER, paths=["a.py"], run_hooks=True
            )
        assert marker.exists() and "commit" in caught.value.command

    def test_commit_with_hooks_runs_commit_msg(self, git: Git, repo: GitRepo) -> None:
        _install_hook(repo, "commit-msg", 'printf "\\nHooked-By: test\\n" >> "$1"')
        repo.write("a.py", "a")
        sha = git.commit(
            repo.path, "Add a", author=AUTHOR, committer=COMMITTER, paths=["a.py"], run_hooks=True
        )
        assert git.trailers(repo.path, sha) == {"Hooked-By": "test"}

    def test_commit_tree_writes_a_commit_without_moving_refs(self, git: Git, repo: GitRepo) -> None:
        head = repo.head()
        tree = repo.head("HEAD^{tree}")
        sha = git.commit_tree(
            repo.path, tree, parents=[head], message="Msg\n\nKey-A: 1\n", author=AUTHOR, committer=COMMITTER
        )
        assert repo.head() == head
        entry = git.log(repo.path, sha, max_count=1)[0]
        assert entry.parents == (head,) and entry.author_name == "node (model-x)"
        assert entry.committer_email == "orchestra@local" and entry.trailers == {"Key-A": "1"}
        assert entry.authored_at == "2026-03-04T05:06:07+02:00" and entry.subject == "Msg"

    def test_sync_index_keeps_status_clean_after_a_ref_move(self, git: Git, repo: GitRepo) -> None:
        head = repo.head()
        repo.write("src/app.py", "print('changed')\n")
        repo.write("new.txt", "n")
        (repo.path / "README.md").unlink()
        paths = ["src/app.py", "new.txt", "README.md"]
        change = git.tree_with_files(repo.path, head, paths)
        sha = git.commit_tree(
            repo.path, change.tree, parents=[head], message="m", author=AUTHOR, committer=COMMITTER
        )
        git.update_ref(repo.path, "refs/heads/main", sha, expected_old=head)
        assert repo.status() != ""
        git.sync_index(repo.path, paths)
        assert repo.status() == ""

    def test_ignored_paths_are_untracked_ignored_only(self, git: Git, repo: GitRepo) -> None:
        repo.write(".gitignore", "*.log\nbuild/\n")
        repo.write("tracked.log", "t")
        repo.write("logs/kept.log", "k")
        repo.git("add", "-f", "tracked.log", "logs/kept.log")
        repo.git("commit", "--quiet", "-m", "track logs")
        repo.write("debug.log", "d")
        repo.write("build/out.o", "o")
        repo.write(":(glob)*.log", "odd name")
        paths = ["debug.log", "tracked.log", "logs/kept.log", "build/out.o", "src/app.py", ":(glob)*.log"]
        assert sorted(git.ignored_paths(repo.path, paths)) == [":(glob)*.log", "build/out.o", "debug.log"]
        assert git.ignored_paths(repo.path, []) == ()

    # --- history ---------------------------------------------------------------------------------

    def test_log_and_trailers(self, git: Git, repo: GitRepo) -> None:
        repo.write("x", "1")
        repo.git("add", "x")
        repo.git(
            "commit", "--quiet", "-m", "Subject line\n\nBody text.\n\nOrchestra-Node: plan\nOrchestra-Turn: 2"
        )
        entries = git.log(repo.path, "HEAD")
        assert [e.subject for e in entries] == ["Subject line", "initial"]
        assert entries[0].message.startswith("Subject line\n\nBody text.")
        assert entries[0].trailers == {"Orchestra-Node": "plan", "Orchestra-Turn": "2"}
        assert git.trailers(repo.path, "HEAD") == {"Orchestra-Node": "plan", "Orchestra-Turn": "2"}
        assert git.trailers(repo.path, "HEAD~1") == {}
        assert len(git.log(repo.path, "HEAD", max_count=1)) == 1

    def test_changed_files_against_first_parent_and_of_a_root_commit(self, git: Git, repo: GitRepo) -> None:
        root = repo.head()
        repo.write("src/app.py", "print('bye')\n")
        repo.write("new dir/ünï.txt", "x")
        (repo.path / "README.md").unlink()
        later = repo.commit_all("later")
        assert {(c.path, c.status) for c in git.changed_files(repo.path, later)} == {
            ("src/app.py", "M"),
            ("new dir/ünï.txt", "A"),
            ("README.md", "D"),
        }
        assert {c.path for c in git.changed_files(repo.path, root)} == {"README.md", "src/app.py"}
        assert {c.status for c in git.changed_files(repo.path, root)} == {"A"}
        repo.git("checkout", "--quiet", "-b", "side", root)
        repo.write("side.txt", "s")
        side = repo.commit_all("side")
        repo.git("checkout", "--quiet", "main")
        repo.git("merge", "--quiet", "--no-ff", "-m", "merge", side)
        assert [c.path for c in git.changed_files(repo.path, "HEAD")] == ["side.txt"]

    def test_config_values_are_added_once_and_shared_by_worktrees(
        self, git: Git, repo: GitRepo, tmp_path: Path
    ) -> None:
        assert git.config_values(repo.path, "orchestra.project") == ()
        assert git.add_config_value(repo.path, "orchestra.project", "/p/one")
        assert git.add_config_value(repo.path, "orchestra.project", "/p/two words")
        assert not git.add_config_value(repo.path, "orchestra.project", "/p/one")
        repo.git("branch", "side")
        repo.git("worktree", "add", "--quiet", str(tmp_path / "wt"), "side")
        assert git.config_values(tmp_path / "wt", "orchestra.project") == ("/p/one", "/p/two words")
        assert repo.git("config", "--local", "--get-all", "orchestra.project").split("\n")[:2] == [
            "/p/one",
            "/p/two words",
        ]

    def test_config_values_ignore_the_global_config(
        self, git: Git, repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        global_config = tmp_path / "global.gitconfig"
        global_config.write_text("[orchestra]\n\tproject = /elsewhere\n", encoding="utf-8")
        monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(global_config))
        assert SubprocessGit().config_values(repo.path, "orchestra.project") == ()

    def test_diff_between_commits_against_worktree_and_staged(self, git: Git, repo: GitRepo) -> None:
        base = repo.head()
        repo.write("src/app.py", "print('bye')\n")
        repo.git("add", "src/app.py")
        staged = git.diff(repo.path)
        assert "diff --git a/src/app.py b/src/app.py" in staged and "+print('bye')" in staged
        repo.write("README.md", "worktree change\n")
        assert "+worktree change" in git.diff(repo.path, base, paths=["README.md"])
        assert "README" not in git.diff(repo.path, base, paths=["src/app.py"])
        later = repo.commit_all("later")
        assert "-print('hi')" in git.diff(repo.path, base, later)

    # --- the fast path: trees without an index ---------------------------------------------------

    def test_tree_with_files_matches_git_add(self, git: Git, repo: GitRepo) -> None:
        repo.write("docs/a/b/deep.md", "deep")
        repo.write("f", "file becomes dir")
        repo.write("d/inner.txt", "dir becomes file")
        base = repo.commit_all("more")
        repo.write("src/app.py", "print('changed')\n")
        repo.write("new/nested/file.txt", "n")
        (repo.path / "docs/a/b/deep.md").unlink()
        (repo.path / "f").unlink()
        repo.write("f/g", "g")
        (repo.path / "d/inner.txt").unlink()
        (repo.path / "d").rmdir()
        repo.write("d", "now a file")
        (repo.path / "README.md").chmod(0o755)
        os.symlink("src/app.py", repo.path / "link")
        repo.write("not-listed.txt", "left alone")
        paths = [
            "src/app.py",
            "new/nested/file.txt",
            "docs/a/b/deep.md",
            "f",
            "f/g",
            "d/inner.txt",
            "d",
            "README.md",
            "link",
            "never/existed",
        ]
        change = git.tree_with_files(repo.path, base, paths)
        assert change.base_commit == base and change.base_tree == repo.head(f"{base}^{{tree}}")
        assert change.changed and change.tree == _index_tree(repo, paths)
        assert "not-listed.txt" not in repo.git("ls-tree", "-r", "--name-only", change.tree)

    def test_tree_with_files_unchanged_and_ref_base(self, git: Git, repo: GitRepo) -> None:
        change = git.tree_with_files(repo.path, "refs/heads/main", ["README.md", "gone.txt"])
        assert change.base_commit == repo.head() and not change.changed

    def test_tree_with_files_can_empty_the_tree(self, git: Git, repo: GitRepo) -> None:
        (repo.path / "README.md").unlink()
        (repo.path / "src/app.py").unlink()
        assert git.tree_with_files(repo.path, "HEAD", ["README.md", "src/app.py"]).tree == EMPTY_TREE

    def test_tree_with_files_respects_core_filemode_false(self, git: Git, repo: GitRepo) -> None:
        repo.git("config", "core.fileMode", "false")
        (repo.path / "src/app.py").chmod(0o755)
        repo.write("src/app.py", "changed\n")
        change = git.tree_with_files(repo.path, "HEAD", ["src/app.py"])
        assert repo.git("ls-tree", change.tree, "src/app.py").startswith("100644")

    def test_tree_with_files_sorts_like_git(self, git: Git, repo: GitRepo) -> None:
        for name in ["a-b", "a.b", "a/x", "a0", "a/y", "ab"]:
            repo.write(name, name)
        paths = ["a-b", "a.b", "a/x", "a0", "a/y", "ab"]
        assert git.tree_with_files(repo.path, "HEAD", paths).tree == _index_tree(repo, paths)

    def test_tree_with_files_refuses_unclean_paths(self, git: Git, repo: GitRepo) -> None:
        for bad in ["../x", "/abs", ".git/config", "a//b", "a\nb"]:
            with pytest.raises(GitError):
                git.tree_with_files(repo.path, "HEAD", [bad])

    # --- locking and environment -----------------------------------------------------------------

    def test_lock_is_reentrant(self, git: Git, repo: GitRepo) -> None:
        with git.lock(repo.path), git.lock(repo.path):
            git.update_ref(repo.path, "refs/heads/other", repo.head(), expected_old=None)
        assert (repo.path / ".git" / "orchestra.lock").exists()

    def test_inherited_git_dir_does_not_redirect(
        self, repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        other = make_repo(tmp_path / "other")
        monkeypatch.setenv("GIT_DIR", str(other.path / ".git"))
        monkeypatch.setenv("GIT_INDEX_FILE", str(other.path / ".git" / "index"))
        assert type(self).make_git().resolve_commit(repo.path, "HEAD") == repo.head()

    @staticmethod
    def make_git() -> Git:
        raise NotImplementedError


def _install_hook(repo: GitRepo, name: str, body: str) -> Path:
    """A hook that leaves a marker file when it runs, then runs `body`."""
    marker = repo.path.parent / f"{name}.ran"
    hook = repo.path / ".git" / "hooks" / name
    hook.parent.mkdir(parents=True, exist_ok=True)
    hook.write_text(f'#!/bin/sh\ntouch "{marker}"\n{body}\n')
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
    return marker


def _index_tree(repo: GitRepo, paths: list[str]) -> str:
    """What porcelain staging of exactly `paths` gives (the reference for the fast path)."""
    for path in paths:
        if os.path.lexists(repo.path / path) or repo.git("ls-files", "--", path):
            repo.git("add", "-A", "--", path)
    return repo.git("write-tree").strip()


class TestSubprocessGit(GitContract):
    @pytest.fixture
    def git(self) -> Git:
        return self.make_git()

    @staticmethod
    def make_git() -> Git:
        return SubprocessGit()
