"""Fetches into one clone from many threads at once (a worker running several branches and sessions of one repo)
while the remote moves and worktrees of the clone come and go: each one succeeds. One fetch at a time goes into a
repository (git's own ref locks refuse a second writer instead of waiting: "cannot lock ref ... is at X but
expected Y"), and not while a worktree is added or removed (a fetch's connectivity check reads every worktree's
HEAD, which `git worktree add` writes as a placeholder first: "did not send all necessary objects")."""

from __future__ import annotations

import threading
from pathlib import Path

from orchestra_adapters.git.remotes import SubprocessGitRemotes
from orchestra_adapters.git.subprocess_git import SubprocessGit
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

    def worktrees_come_and_go() -> None:
        local = SubprocessGit()
        moving.wait(60)
        for number in range(ROUNDS * 2):
            path = tmp_path / f"wt{number}"
            try:
                local.create_branch(clone, f"wt{number}", git(clone, "rev-parse", "HEAD").strip())
                local.worktree_add(clone, path, f"wt{number}")
                local.worktree_remove(clone, path)
            except Exception as error:  # every failure is the finding
                failures.append(str(error))

    threads = [threading.Thread(target=move_the_remote), threading.Thread(target=worktrees_come_and_go)]
    threads += [threading.Thread(target=fetch, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    assert failures == []
