"""The README quick start, step by step: copy the example, git init, commit, compile, run, git log, status,
show."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.support.git_repos import GitRepo, git
from tests.support.orchestra_project import checkout_fingerprint, copy_example, orchestra, trailers


@pytest.mark.slow
def test_quick_start_commits_each_turn_to_a_session_branch_and_show_traces_it(tmp_path: Path) -> None:
    root = copy_example("quickstart", tmp_path / "orchestra-quickstart")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "Start")
    repo = GitRepo(root)
    before = checkout_fingerprint(repo)

    compiled = orchestra("compile", "pipeline.dot", cwd=root)
    assert compiled.returncode == 0, compiled.stderr
    # Python as a user has it, writing bytecode: the `check` stage's __pycache__ is ignored, so not committed.
    writes_bytecode = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    ran = orchestra("run", "pipeline.dot", cwd=root, env=writes_bytecode)
    assert ran.returncode == 0, ran.stderr + ran.stdout
    assert ran.stdout.splitlines()[0] == "session 1"

    branch = "orchestra/quickstart/1"
    assert branch in repo.branches()
    log = repo.log(f"main..{branch}", "%H%x00%an <%ae>%x00%s")
    commits = [line.split("\0") for line in reversed(log)]
    assert [subject for _, _, subject in commits] == [
        "Add hello.py with a greet() function",
        "Add a test for greet()",
    ]
    assert {author for _, author, _ in commits} == {"implement (scripted) <orchestra@local>"}
    for number, (sha, _, _) in enumerate(commits):
        assert trailers(repo, sha) == {
            "Orchestra-Model": "scripted",
            "Orchestra-Provider": "scripted",
            "Orchestra-Node": "implement",
            "Orchestra-Pipeline": "quickstart",
            "Orchestra-Session": "1",
            "Orchestra-Turn": str(number),
        }
    assert repo.files_in(branch) == sorted([*repo.files_in("main"), "hello.py", "test_hello.py"])
    assert 'print("ok")' in repo.show(branch, "test_hello.py")
    worktree = root / ".orchestra" / "worktrees" / "1" / "project"
    assert git(worktree, "symbolic-ref", "--short", "HEAD").strip() == branch
    assert checkout_fingerprint(repo) == before and repo.status() == ""

    status = orchestra("status", "1", cwd=root)
    assert status.returncode == 0, status.stderr
    assert all(sha[:8] in status.stdout for sha, _, _ in commits)
    shown = orchestra("show", branch, cwd=root)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines()[0] == f"commit   {commits[1][0][:12]}  Add a test for greet()"
    assert "node     implement" in shown.stdout and "project:write-file" in shown.stdout
    document = json.loads(orchestra("show", f"{branch}~1", "--json", cwd=worktree).stdout)
    assert (document["commit"]["sha"], document["turn"]["turn_number"]) == (commits[0][0], 0)
    assert document["turn"]["tool_calls"][0]["args"]["path"] == "hello.py"
