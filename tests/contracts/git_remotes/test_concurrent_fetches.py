"""Fetches into one clone from many threads at once (a worker running several branches and sessions of one repo)
while the remote moves: each one succeeds, since SubprocessGitRemotes lets one fetch at a time into a repository
(git's own ref locks refuse a second writer instead of waiting: "cannot lock ref ... is at X but expected Y")."""

from __future__ import annotations

import threading
from pathlib import Path

from orchestra_adapters.git.remotes import SubprocessGitRemotes
from tests.support.git_remote_repos import bare_remote, commit_file
from tests.support.git_repos import git

ROUNDS = 12


def test_concurrent_fetches_into_one_clone_all_succeed_while_the_remote_moves(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    url = remote.as_uri()
    writer = tmp_path / "writer"
    git(tmp_path, "clone", "--quiet", url, str(writer))
    for name in ("a", "b", "c"):
        git(writer, "push", "--quiet", "origin", f"HEAD:refs/heads/work/{name}")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "--quiet", url, str(clone))
    remotes = SubprocessGitRemotes(timeout_s=120)
    failures: list[str] = []
    moving = threading.Event()

    def move_the_remote() -> None:
        for number in range(ROUNDS * 2):
            commit_file(writer, "moving.txt", f"{number}\n")
            for name in ("a", "b", "c"):
                git(writer, "push", "--quiet", "--force", "origin", f"HEAD:refs/heads/work/{name}")
            moving.set()

    def fetch(kind: int) -> None:
        moving.wait(60)
        for _ in range(ROUNDS):
            try:
                if kind % 2:
                    remotes.fetch(clone, url, ["+refs/heads/*:refs/remotes/origin/*"])
                else:
                    remotes.fetch_branch(clone, url, f"work/{'abc'[kind % 3]}")
            except Exception as error:  # every failure is the finding
                failures.append(str(error))

    threads = [threading.Thread(target=move_the_remote)] + [threading.Thread(target=fetch, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    assert failures == []
