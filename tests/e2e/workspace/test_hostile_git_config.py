"""`orchestra run` in a repository whose config names programs (fsmonitor, hooks, filter and diff drivers,
pager, editor, gpg, ssh, credentials), as if an agent had managed to write `.git/config`: a whole run with
per-turn commits, then status and show, runs none of them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.git_repos import GitRepo, git
from tests.support.hostile_git import HostileRepo
from tests.support.orchestra_project import copy_example, orchestra


@pytest.mark.slow
def test_a_full_run_with_commits_runs_no_program_the_repository_config_names(tmp_path: Path) -> None:
    root = copy_example("quickstart", tmp_path / "project")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "Start")
    hostile = HostileRepo(root, tmp_path / "spies")
    hostile.commit_attributes()
    hostile.arm()

    ran = orchestra("run", "pipeline.dot", cwd=root)
    assert ran.returncode == 0, ran.stderr + ran.stdout
    branch = "orchestra/quickstart/1"
    assert orchestra("status", "1", cwd=root).returncode == 0
    shown = orchestra("show", branch, cwd=root)
    assert shown.returncode == 0, shown.stderr
    assert "node     implement" in shown.stdout
    assert hostile.runs() == []

    repo = GitRepo(root)
    subjects = repo.log(f"main..{branch}", "%s")
    assert subjects == ["Add a test for greet()", "Add hello.py with a greet() function"]
    assert 'print("ok")' in repo.show(branch, "test_hello.py")  # stored as the agent wrote it
    hostile.plain_git("status", "--porcelain")
    assert any(line.startswith("spy fsmonitor") for line in hostile.runs())  # plain git does run them
