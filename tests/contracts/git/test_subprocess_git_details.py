"""SubprocessGit specifics beyond the port contract: errors, environment, split index, process locks."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from orchestra_adapters.git import SubprocessGit, subprocess_git
from orchestra_adapters.git.command import GitCommand, git_date, git_environment
from orchestra_core.ports.git import GitError
from tests.support.git_repos import GitRepo, make_repo

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    return make_repo(tmp_path / "repo", {"README.md": "hello\n"})


def test_git_error_names_repo_command_stderr_and_exit_code(repo: GitRepo) -> None:
    with pytest.raises(GitError) as caught:
        GitCommand().run(repo.path, ["rev-parse", "--verify", "no-such-rev"])
    error = caught.value
    assert error.repo == str(repo.path) and error.command == ("rev-parse", "--verify", "no-such-rev")
    assert error.exit_code == 128 and "Needed a single revision" in error.stderr
    assert str(error).startswith(f"git rev-parse --verify no-such-rev failed in {repo.path}: ")


def test_missing_git_executable_is_a_git_error(repo: GitRepo) -> None:
    with pytest.raises(GitError, match="No such file"):
        GitCommand(executable="/nonexistent/git").run(repo.path, ["status"])


def test_environment_is_fixed_and_prompt_free() -> None:
    env = git_environment(
        {"GIT_DIR": "/elsewhere", "LC_ALL": "de_DE.UTF-8", "PATH": "/bin", "GIT_WORK_TREE": "/x"}
    )
    assert "GIT_DIR" not in env and "GIT_WORK_TREE" not in env and env["PATH"] == "/bin"
    assert env["GIT_TERMINAL_PROMPT"] == "0" and env["LC_ALL"] == "C" and env["GIT_PAGER"] == "cat"


def test_git_date_keeps_the_offset() -> None:
    from datetime import datetime, timedelta, timezone

    assert (
        git_date(datetime(2026, 1, 1, tzinfo=timezone(timedelta(hours=-5, minutes=-30))))
        == "@1767245400 -0530"
    )
    assert git_date(datetime(2026, 1, 1)) == "@1767225600 +0000"


def test_large_repositories_get_a_split_index_in_new_worktrees(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    git = SubprocessGit()
    git.create_branch(repo.path, "small", repo.head())
    git.worktree_add(repo.path, tmp_path / "small", "small")
    assert not list((repo.path / ".git" / "worktrees" / "small").glob("sharedindex.*"))
    monkeypatch.setattr(subprocess_git, "SPLIT_INDEX_THRESHOLD", 0)
    git.create_branch(repo.path, "large", repo.head())
    git.worktree_add(repo.path, tmp_path / "large", "large")
    assert list((repo.path / ".git" / "worktrees" / "large").glob("sharedindex.*"))
    (tmp_path / "large" / "README.md").write_text("changed\n")
    git.sync_index(tmp_path / "large", ["README.md"])
    assert repo.status(tmp_path / "large") == "M  README.md\n"


_HOLDER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from orchestra_adapters.git import SubprocessGit
    with SubprocessGit().lock(Path(sys.argv[1])):
        print("locked", flush=True)
        time.sleep(float(sys.argv[2]))
    """
)


@pytest.mark.slow
def test_lock_excludes_other_processes(repo: GitRepo) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(repo.path), "0.6"], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
    started = time.monotonic()
    with SubprocessGit().lock(repo.path):
        waited = time.monotonic() - started
    holder.wait(timeout=30)
    assert waited > 0.3
