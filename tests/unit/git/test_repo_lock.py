"""SubprocessGit.lock between threads and adapter instances of one process (other processes: the git details)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from orchestra_adapters.git import SubprocessGit
from tests.support.git_repos import GitRepo, make_repo


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    return make_repo(tmp_path / "repo", {"README.md": "hello\n"})


def test_two_adapter_instances_in_one_thread_re_enter_instead_of_deadlocking(repo: GitRepo) -> None:
    with SubprocessGit().lock(repo.path), SubprocessGit().lock(repo.path), SubprocessGit().lock(repo.path):
        assert (repo.path / ".git" / "orchestra.lock").exists()


def test_the_lock_excludes_other_threads_until_the_holder_lets_go(repo: GitRepo) -> None:
    git = SubprocessGit()
    holding, entered = threading.Event(), threading.Event()
    release = threading.Event()

    def holder() -> None:
        with git.lock(repo.path), git.lock(repo.path):
            holding.set()
            release.wait(10)

    def contender() -> None:
        with SubprocessGit().lock(repo.path):
            entered.set()

    first = threading.Thread(target=holder)
    first.start()
    assert holding.wait(10)
    second = threading.Thread(target=contender)
    second.start()
    time.sleep(0.3)
    assert not entered.is_set()
    release.set()
    assert entered.wait(10)
    first.join(10)
    second.join(10)


def test_a_failing_body_releases_the_lock_for_other_threads(repo: GitRepo) -> None:
    with pytest.raises(ValueError, match="boom"), SubprocessGit().lock(repo.path):
        raise ValueError("boom")
    entered = threading.Event()

    def contender() -> None:
        with SubprocessGit().lock(repo.path):
            entered.set()

    thread = threading.Thread(target=contender)
    thread.start()
    assert entered.wait(10)
    thread.join(10)
