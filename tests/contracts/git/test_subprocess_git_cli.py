"""SubprocessGit beside the git command line: what the port-only contract cannot see.

Bare clones, annotated tags, detached HEADs, `git mv`, commits and merges made by git itself, the files
git keeps (`info/exclude`, the lock file, the config), the environment, and trees compared with what
porcelain staging of the same paths writes.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from orchestra_adapters.git import SubprocessGit
from orchestra_adapters.git.command import GitCommand
from orchestra_core.ports.git import Git, GitError, RefConflictError
from orchestra_core.testing.contracts.git import AUTHOR, COMMITTER
from tests.support.git_repos import GitRepo, make_repo


@pytest.fixture
def git() -> Git:
    return SubprocessGit()


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    return make_repo(tmp_path / "repo", {"README.md": "hello\n", "src/app.py": "print('hi')\n"})


def _index_tree(repo: GitRepo, paths: list[str]) -> str:
    """What porcelain staging of exactly `paths` gives (the reference for the fast path)."""
    for path in paths:
        if os.path.lexists(repo.path / path) or repo.git("ls-files", "--", path):
            repo.git("add", "-A", "--", path)
    return repo.git("write-tree").strip()


def test_repository_of_bare_repo_and_non_repo(git: Git, tmp_path: Path, repo: GitRepo) -> None:
    repo.git("clone", "--quiet", "--bare", str(repo.path), str(tmp_path / "bare.git"))
    assert git.repository(tmp_path / "bare.git").is_bare
    (tmp_path / "plain").mkdir()
    with pytest.raises(GitError) as caught:
        git.repository(tmp_path / "plain")
    assert str(tmp_path / "plain") in str(caught.value) and "rev-parse" in str(caught.value)
    assert "not a git repository" in caught.value.stderr


def test_repository_answers_from_one_process_and_none_outside_every_repository(
    repo: GitRepo, tmp_path: Path
) -> None:
    (tmp_path / "plain").mkdir()
    missing_git = SubprocessGit(GitCommand(executable=str(tmp_path / "no-such-git")))
    with pytest.raises(GitError) as caught:
        missing_git.repository(tmp_path / "plain")  # refused before any git process would be started
    assert "not a git repository" in caught.value.stderr
    runs: list[list[str]] = []

    class CountingCommand(GitCommand):
        def run(self, cwd: Path, args: Sequence[str], **options: Any) -> subprocess.CompletedProcess[bytes]:
            runs.append(list(args))
            return super().run(cwd, args, **options)

    git = SubprocessGit(CountingCommand())
    info = git.repository(repo.path / "src")
    assert info.toplevel == repo.path.resolve() and not info.is_bare and len(runs) == 1
    assert git.add_exclude(repo.path, "/x/") and len(runs) == 1  # the answer is reused for the root
    assert "/x/" in (repo.path / ".git" / "info" / "exclude").read_text()
    with pytest.raises(GitError):
        git.repository(repo.path / ".git")  # a git dir has no work tree, as before


def test_annotated_tags_are_peeled_to_their_commit(git: Git, repo: GitRepo) -> None:
    repo.git("tag", "-a", "v1", "-m", "tag")
    assert git.resolve_commit(repo.path, "v1") == repo.head()


def test_current_branch_of_detached_heads(git: Git, repo: GitRepo, tmp_path: Path) -> None:
    repo.git("worktree", "add", "--quiet", "-b", "side/work", str(tmp_path / "wt"))
    repo.git("checkout", "--quiet", "--detach")
    assert git.current_branch(repo.path) is None
    repo.git("-C", str(tmp_path / "wt"), "checkout", "--quiet", "--detach")
    assert git.current_branch(tmp_path / "wt") is None


def test_status_reports_renames_made_by_git_mv(git: Git, repo: GitRepo) -> None:
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


def test_ref_conflicts_name_update_ref(git: Git, repo: GitRepo) -> None:
    first = repo.head()
    repo.write("b.txt", "b")
    second = repo.commit_all("second")
    with pytest.raises(RefConflictError) as caught:
        git.update_ref(repo.path, "refs/heads/main", first, expected_old=first)
    assert "update-ref" in str(caught.value)
    assert repo.head("main") == second


def test_add_exclude_writes_info_exclude_once(git: Git, repo: GitRepo) -> None:
    exclude = repo.path / ".git" / "info" / "exclude"
    exclude.unlink(missing_ok=True)
    assert git.add_exclude(repo.path, "/.orchestra/") is True
    assert git.add_exclude(repo.path, "/.orchestra/") is False
    assert exclude.read_text().splitlines().count("/.orchestra/") == 1
    repo.write(".orchestra/store.db", "x")
    assert repo.status() == ""


def test_commits_read_back_with_git_show_and_log(git: Git, repo: GitRepo) -> None:
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


def test_log_and_trailers_of_commits_git_made(git: Git, repo: GitRepo) -> None:
    repo.write("x", "1")
    repo.git("add", "x")
    repo.git(
        "commit", "--quiet", "-m", "Subject line\n\nBody text.\n\nOrchestra-Node: plan\nOrchestra-Turn: 2"
    )
    entries = git.log(repo.path, "HEAD")
    assert [e.subject for e in entries] == ["Subject line", "initial"]
    assert entries[0].trailers == {"Orchestra-Node": "plan", "Orchestra-Turn": "2"}
    assert git.trailers(repo.path, "HEAD") == {"Orchestra-Node": "plan", "Orchestra-Turn": "2"}
    assert git.trailers(repo.path, "HEAD~1") == {}


def test_changed_files_of_a_merge_git_made(git: Git, repo: GitRepo) -> None:
    root = repo.head()
    repo.git("checkout", "--quiet", "-b", "side", root)
    repo.write("side.txt", "s")
    side = repo.commit_all("side")
    repo.git("checkout", "--quiet", "main")
    repo.git("merge", "--quiet", "--no-ff", "-m", "merge", side)
    assert [c.path for c in git.changed_files(repo.path, "HEAD")] == ["side.txt"]


def test_config_values_land_in_the_local_config(git: Git, repo: GitRepo) -> None:
    assert git.add_config_value(repo.path, "orchestra.project", "/p/one")
    assert git.add_config_value(repo.path, "orchestra.project", "/p/two words")
    assert repo.git("config", "--local", "--get-all", "orchestra.project").split("\n")[:2] == [
        "/p/one",
        "/p/two words",
    ]


def test_config_values_ignore_the_global_config(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    global_config = tmp_path / "global.gitconfig"
    global_config.write_text("[orchestra]\n\tproject = /elsewhere\n", encoding="utf-8")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(global_config))
    assert SubprocessGit().config_values(repo.path, "orchestra.project") == ()


def test_tree_with_files_matches_git_add(git: Git, repo: GitRepo) -> None:
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
    paths = ["src/app.py", "new/nested/file.txt", "docs/a/b/deep.md", "f", "f/g", "d/inner.txt", "d",
             "README.md", "link", "never/existed"]  # fmt: skip
    change = git.tree_with_files(repo.path, base, paths)
    assert change.base_commit == base and change.base_tree == repo.head(f"{base}^{{tree}}")
    assert change.changed and change.tree == _index_tree(repo, paths)
    assert "not-listed.txt" not in repo.git("ls-tree", "-r", "--name-only", change.tree)


def test_tree_with_files_sorts_like_git_write_tree(git: Git, repo: GitRepo) -> None:
    for name in ["a-b", "a.b", "a/x", "a0", "a/y", "ab"]:
        repo.write(name, name)
    paths = ["a-b", "a.b", "a/x", "a0", "a/y", "ab"]
    assert git.tree_with_files(repo.path, "HEAD", paths).tree == _index_tree(repo, paths)


def test_tree_with_files_keeps_the_mode_git_config_set(git: Git, repo: GitRepo) -> None:
    repo.git("config", "core.fileMode", "false")
    (repo.path / "src/app.py").chmod(0o755)
    repo.write("src/app.py", "changed\n")
    change = git.tree_with_files(repo.path, "HEAD", ["src/app.py"])
    assert repo.git("ls-tree", change.tree, "src/app.py").startswith("100644")


def test_the_lock_is_a_file_in_the_git_dir(git: Git, repo: GitRepo) -> None:
    with git.lock(repo.path), git.lock(repo.path):
        git.update_ref(repo.path, "refs/heads/other", repo.head(), expected_old=None)
    assert (repo.path / ".git" / "orchestra.lock").exists()


def test_inherited_git_dir_does_not_redirect(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = make_repo(tmp_path / "other")
    monkeypatch.setenv("GIT_DIR", str(other.path / ".git"))
    monkeypatch.setenv("GIT_INDEX_FILE", str(other.path / ".git" / "index"))
    assert SubprocessGit().resolve_commit(repo.path, "HEAD") == repo.head()
