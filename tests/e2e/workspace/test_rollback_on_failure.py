"""`--rollback-on-failure` / `workspace.rollback: on_failure` through `orchestra run` with real repositories and
the scripted model: a failed run leaves every repo as it was before it, the work kept under
refs/orchestra/abandoned/ and a SessionRolledBack event in the store (issue 17)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from orchestra_core.model.workspace_events import SessionRolledBack
from tests.support.git_repos import GitRepo, make_repo
from tests.support.orchestra_project import (
    SCRIPTED_PROVIDER,
    checkout_fingerprint,
    committed_files,
    orchestra,
    records_of,
    trailers,
)

BRANCH = "orchestra/fails/1"
# PARALLEL's branches both change README.md: the join conflicts and the run fails with both branches' worktrees
# and git branches still there.
# The agent commits greeting.txt; the tool node then makes a file and an edit (committed as its turn) and fails.
PIPELINE = """digraph fails {
    start [shape=Mdiamond]; exit [shape=Msquare]
    implement [prompt="Write the greeting"]
    check [shape=parallelogram, tool_command="echo leftover > scratch.txt; echo changed >> README.md; exit 1"]
    start -> implement -> check -> exit
}
"""
PARALLEL = """digraph fails {
    start [shape=Mdiamond]; exit [shape=Msquare]
    implement [prompt="Write the greeting"]
    fan [shape=component]
    left [prompt="Write the left module"]
    right [prompt="Write the right module"]
    join [shape=tripleoctagon]
    start -> implement -> fan
    fan -> left -> join
    fan -> right -> join
    join -> exit
}
"""
SUCCEEDS = """digraph fails {
    start [shape=Mdiamond]; exit [shape=Msquare]
    implement [prompt="Write the greeting"]
    start -> implement -> exit
}
"""
CASSETTE = r"""
nodes:
  implement:
    - content: "Writing it."
      tool_calls:
        - {name: "project:write-file", args: {path: greeting.txt, content: "hello\n"}}
    - content: "Done."
  left:
    - content: "The left module."
      tool_calls:
        - {name: "project:write-file", args: {path: left.txt, content: "left\n"}}
        - {name: "project:write-file", args: {path: README.md, content: "left\n"}}
    - content: "Done."
  right:
    - content: "The right module."
      tool_calls:
        - {name: "project:write-file", args: {path: README.md, content: "right\n"}}
    - content: "Done."
default: "Done."
"""


def _project(root: Path, isolation: str, pipeline: str = PIPELINE, rollback: str | None = None) -> GitRepo:
    workspace = f"workspace:\n  repos:\n    project: {{path: ., isolation: {isolation}}}\n"
    if rollback is not None:
        workspace += f"  rollback: {rollback}\n"
    repo = make_repo(
        root / "project",
        {
            "orchestra.yaml": SCRIPTED_PROVIDER + workspace,
            "fails.dot": pipeline,
            "cassette.yaml": CASSETTE,
            "README.md": "hello\n",
            ".gitignore": ".env\n",
        },
    )
    repo.write(".env", "SECRET=1\n")  # the user's ignored file: a rollback never touches it
    return repo


def _state(repo: GitRepo) -> dict[str, Any]:
    """What a user sees of the repository: refs (Orchestra's own evidence refs aside), worktrees, checkout
    (the project's state directory `.orchestra/` aside: the run's store lives there)."""
    refs = [line for line in repo.git("for-each-ref").splitlines() if "\trefs/orchestra/" not in line]
    status = repo.git("status", "--porcelain", "--ignored").splitlines()
    return {
        "refs": refs,
        "worktrees": repo.git("worktree", "list", "--porcelain"),
        "status": [line for line in status if line != "!! .orchestra/"],
        "checkout": checkout_fingerprint(repo),
    }


def _abandoned(repo: GitRepo) -> list[str]:
    return repo.git("for-each-ref", "--format=%(refname) %(objectname)", "refs/orchestra/abandoned/").splitlines()


@pytest.mark.parametrize("isolation", ["worktree", "in_place"])
def test_a_failed_run_with_the_flag_leaves_the_repo_as_it_was_and_keeps_the_commits(
    tmp_path: Path, isolation: str
) -> None:
    repo = _project(tmp_path, isolation)
    before = _state(repo)
    base = repo.head()
    result = orchestra("run", "fails.dot", "--rollback-on-failure", "--json", cwd=repo.path)
    assert result.returncode == 1, result.stderr + result.stdout
    assert _state(repo) == before
    assert repo.branches() == ["main"] and repo.head("main") == base
    assert not (repo.path / ".orchestra" / "worktrees" / "1").exists()
    [kept] = _abandoned(repo)
    ref, sha = kept.split()
    assert ref == "refs/orchestra/abandoned/1/1"
    check, greeting = repo.log(f"{base}..{sha}")
    assert check == sha and committed_files(repo, greeting) == ["greeting.txt"]
    # The failed tool stage's work is its commit, kept with the rest.
    assert committed_files(repo, check) == ["README.md", "scratch.txt"]
    assert trailers(repo, check)["Orchestra-Exit-Code"] == "1"
    [(_, event)] = records_of(repo.path, "1", SessionRolledBack)
    assert (event.repo, event.branch, event.head_sha, event.base_sha, event.abandoned_ref) == (
        "project", BRANCH, sha, base, ref,
    )
    document = json.loads(result.stdout)
    assert document["status"] == "fail" and document["repos"]["project"]["head_sha"] == sha
    status = orchestra("status", "1", cwd=repo.path)
    assert f"rolled back: project {BRANCH} at {sha[:12]} kept as {ref}" in status.stdout


@pytest.mark.parametrize("isolation", ["worktree", "in_place"])
def test_without_the_flag_a_failed_run_keeps_its_branch(tmp_path: Path, isolation: str) -> None:
    repo = _project(tmp_path, isolation)
    result = orchestra("run", "fails.dot", "--quiet", cwd=repo.path)
    assert result.returncode == 1, result.stderr + result.stdout
    assert repo.branches() == ["main", BRANCH]
    assert _abandoned(repo) == [] and records_of(repo.path, "1", SessionRolledBack) == []


def test_the_config_key_rolls_back_and_the_flag_overrides_it(tmp_path: Path) -> None:
    repo = _project(tmp_path / "on", "worktree", rollback="on_failure")
    before = _state(repo)
    assert orchestra("run", "fails.dot", "--quiet", cwd=repo.path).returncode == 1
    assert _state(repo) == before
    kept = _project(tmp_path / "off", "worktree", rollback="on_failure")
    assert orchestra("run", "fails.dot", "--quiet", "--no-rollback-on-failure", cwd=kept.path).returncode == 1
    assert kept.branches() == ["main", BRANCH]


def test_a_succeeding_run_with_the_flag_keeps_its_branch(tmp_path: Path) -> None:
    repo = _project(tmp_path, "worktree", SUCCEEDS)
    result = orchestra("run", "fails.dot", "--quiet", "--rollback-on-failure", cwd=repo.path)
    assert result.returncode == 0, result.stderr + result.stdout
    assert repo.branches() == ["main", BRANCH] and repo.files_in(BRANCH).count("greeting.txt") == 1
    assert _abandoned(repo) == []


@pytest.mark.parametrize("isolation", ["worktree", "in_place"])
def test_parallel_branch_worktrees_and_branches_are_rolled_back_too(tmp_path: Path, isolation: str) -> None:
    repo = _project(tmp_path, isolation, PARALLEL)
    before = _state(repo)
    result = orchestra("run", "fails.dot", "--quiet", "--rollback-on-failure", cwd=repo.path)
    assert result.returncode == 1, result.stderr + result.stdout
    assert _state(repo) == before
    assert not (repo.path / ".orchestra" / "worktrees" / "1").exists()
    kept = {sha for _, sha in (line.split() for line in _abandoned(repo))}
    greeting = {sha for sha in kept if committed_files(repo, sha) == ["greeting.txt"]}
    left = {sha for sha in kept if committed_files(repo, sha) == ["README.md", "left.txt"]}
    right = {sha for sha in kept if repo.show(sha, "README.md") == "right\n"}
    assert len(greeting) == 1 and len(left) == 1 and len(right) == 1, kept


def test_a_bad_rollback_value_is_refused_naming_the_key(tmp_path: Path) -> None:
    repo = _project(tmp_path, "worktree", rollback="sometimes")
    result = orchestra("run", "fails.dot", cwd=repo.path)
    assert result.returncode == 2
    assert "workspace.rollback: expected one of never, on_failure" in result.stderr
    assert repo.branches() == ["main"]


@pytest.mark.parametrize("isolation", ["worktree", "in_place"])
def test_a_resumed_session_that_fails_again_is_rolled_back_entirely(tmp_path: Path, isolation: str) -> None:
    repo = _project(tmp_path, isolation)
    before = _state(repo)
    assert orchestra("run", "fails.dot", "--quiet", cwd=repo.path).returncode == 1
    assert repo.branches() == ["main", BRANCH]
    head = repo.head(BRANCH)
    # Between the runs, the user starts a file of their own where the session works.
    workspace = repo.path / ".orchestra" / "worktrees" / "1" / "project" if isolation == "worktree" else repo.path
    (workspace / "mine.txt").write_text("my own work\n")
    result = orchestra("resume", "1", "--quiet", "--rollback-on-failure", cwd=repo.path)
    assert result.returncode == 1, result.stderr + result.stdout
    assert _state(repo) == before
    # The user's file was saved before the resume reset the worktree (said even with --quiet), then check ran
    # again on the first run's head and committed its second README edit there: that head is kept too.
    saved_ref = "refs/orchestra/abandoned/1/1"
    assert f"warning: project: uncommitted changes in {workspace} saved before resume as {saved_ref}: mine.txt" \
        in result.stderr, result.stderr
    assert repo.show(saved_ref, "mine.txt") == "my own work\n" and repo.head(f"{saved_ref}~1") == head
    [saved, kept] = [line.split()[1] for line in _abandoned(repo)]
    assert saved == repo.head(saved_ref)
    assert repo.head(f"{kept}~1") == head and committed_files(repo, kept) == ["README.md"]


INTERRUPTED = """digraph fails {
    start [shape=Mdiamond]; exit [shape=Msquare]
    implement [prompt="Write the greeting"]
    stop [shape=parallelogram, tool_command="kill -INT $PPID; sleep 30"]
    start -> implement -> stop -> exit
}
"""


def test_an_interrupted_run_is_never_rolled_back_and_stays_resumable(tmp_path: Path) -> None:
    repo = _project(tmp_path, "worktree", INTERRUPTED)
    result = orchestra("run", "fails.dot", "--quiet", "--rollback-on-failure", cwd=repo.path)
    assert "continue with: orchestra resume 1" in result.stderr, result.stderr + result.stdout
    assert repo.branches() == ["main", BRANCH] and _abandoned(repo) == []
    assert (repo.path / ".orchestra" / "worktrees" / "1" / "project" / "greeting.txt").exists()
    assert records_of(repo.path, "1", SessionRolledBack) == []
