"""Parallel branches in their own worktrees, merged at fan-in, through `orchestra run` with real repositories
and the scripted model (seed 001: Worktree Tests, Worktree Merge Tests, Snapshot after parallel, E2E Parallel
with worktrees). Merge conflicts: test_fan_in_conflicts.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from attrs import frozen

from orchestra_core.model import records as r
from orchestra_core.model.turn import AgentTurn
from orchestra_core.model.workspace_events import WorktreeCreated, WorktreeMerged
from tests.support.environment import hermetic_env
from tests.support.git_repos import GitRepo, make_repo
from tests.support.orchestra_project import (
    SCRIPTED_PROVIDER,
    all_agent_turns,
    committed_files,
    records_of,
    run_json,
    trailers,
    write_files,
)

BRANCH = "orchestra/par/1"
WORKTREES = ".orchestra/worktrees/1"
# The tool node of the right branch waits until the left agent's file is committed in the left worktree,
# then reports what it sees from its own worktree: both branch worktrees, every file of its own full checkout
# (it runs a command), only what the left agent wrote in the left's lazy one, and no left.txt of its own.
LOOK = (
    "for i in $(seq 200); do test -n \\\"$(git -C ../../fan:left/project log -1 --format=%H -- left.txt)\\\" "
    "&& break; sleep 0.05; done; ls -d ../../fan:*/project; git rev-parse --abbrev-ref HEAD; "
    "test -f shared.txt && echo look-full || echo look-lazy; "
    "test -f ../../fan:left/project/shared.txt && echo left-full || echo left-lazy; "
    "test -f left.txt && echo shared || echo isolated"
)
PIPELINE = f"""digraph par {{
    start [shape=Mdiamond]; exit [shape=Msquare]
    fan [shape=component]
    left [prompt="Write the left module"]
    look [shape=parallelogram, tool_command="{LOOK}"]
    right [prompt="Write the right module"]
    reader [prompt="Read the readme", agent=reader]
    join [shape=tripleoctagon]
    after [prompt="Check both modules"]
    start -> fan
    fan -> left -> join
    fan -> look -> right -> join
    fan -> reader -> join
    join -> after -> exit
}}
"""
CASSETTE = r"""
nodes:
  left:
    - content: "The left module."
      tool_calls:
        - {name: "project:write-file", args: {path: left.txt, content: "left\n"}}
    - content: "And its helper."
      tool_calls:
        - {name: "project:write-file", args: {path: lib/left_helper.txt, content: "helper\n"}}
    - content: "Done."
  right:
    - content: "The right module."
      tool_calls:
        - {name: "project:write-file", args: {path: right.txt, content: "right\n"}}
    - content: "Done."
  reader:
    - content: "Reading."
      tool_calls:
        - {name: "project:read-file", args: {path: README.md}}
    - content: "Done."
  after:
    - content: "Both are there."
      tool_calls:
        - {name: "project:list-files", args: {}}
    - content: "Done."
default: "Done."
"""
AGENTS = "agents:\n  reader:\n    disallowed_tools: ['*:write-file', '*:edit-file']\n"
WORKSPACE = "workspace:\n  repos:\n    project: {path: ../repo}\n"


@frozen
class ParallelRun:
    project: Path
    repo: GitRepo
    base: str
    document: dict[str, Any]


def _project(root: Path, pipeline: str, cassette: str) -> tuple[Path, GitRepo, dict[str, str]]:
    (root / "home").mkdir()
    env = hermetic_env(root / "home")
    repo = make_repo(root / "repo", {"README.md": "hello\n", "shared.txt": "one\ntwo\nthree\n"})
    project = root / "project"
    write_files(
        project,
        {
            "orchestra.yaml": SCRIPTED_PROVIDER + AGENTS + WORKSPACE,
            "par.dot": pipeline,
            "cassette.yaml": cassette,
        },
    )
    return project, repo, env


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> ParallelRun:
    project, repo, env = _project(tmp_path_factory.mktemp("parallel"), PIPELINE, CASSETTE)
    base = repo.head()
    document = run_json("run", "par.dot", cwd=project, env=env)
    return ParallelRun(project, repo, base, document)


def _turns(project: Path, session_id: str = "1") -> list[AgentTurn]:
    return all_agent_turns(project, session_id)


def _branch_result(run: ParallelRun, start: str) -> dict[str, Any]:
    return next(result for result in run.document["context"]["parallel.results"] if result["id"] == start)


def test_two_writing_branches_get_two_worktrees_at_the_documented_path(clean: ParallelRun) -> None:
    created = [record for _, record in records_of(clean.project, "1", WorktreeCreated) if record.node_id]
    assert sorted((c.repo, c.branch) for c in created) == [
        ("project", f"{BRANCH}--fan-left"),
        ("project", f"{BRANCH}--fan-look"),
    ]
    worktrees = clean.project.parent / "project" / WORKTREES
    assert sorted(Path(c.path) for c in created) == [
        (worktrees / "fan:left" / "project").resolve(),
        (worktrees / "fan:look" / "project").resolve(),
    ]
    assert all(c.base_sha == clean.base and c.node_id == "fan" for c in created)
    output = _branch_result(clean, "look")["context_updates"]["tool.output"]
    # seen during the run from the right branch's worktree: both worktrees, its own git branch
    assert "../../fan:left/project" in output and "../../fan:look/project" in output
    assert f"{BRANCH}--fan-look" in output


def test_a_write_in_one_worktree_is_not_visible_in_the_other(clean: ParallelRun) -> None:
    assert _branch_result(clean, "look")["context_updates"]["tool.output"].endswith("isolated")


def test_a_branch_running_a_command_gets_a_full_checkout_and_an_agent_only_branch_a_lazy_one(clean: ParallelRun) -> None:
    output = _branch_result(clean, "look")["context_updates"]["tool.output"]
    # the left agent never wrote shared.txt: its worktree holds only what it wrote
    assert "look-full" in output and "left-lazy" in output


def test_per_turn_commits_land_on_the_branch_not_the_session_branch(clean: ParallelRun) -> None:
    turns = {record.node_id: record for record in _turns(clean.project) if record.commits}
    assert turns["left"].commits[0].branch == f"{BRANCH}--fan-left"
    assert turns["right"].commits[0].branch == f"{BRANCH}--fan-look"
    left_commits = [c for t in _turns(clean.project) if t.node_id == "left" for c in t.commits]
    assert [committed_files(clean.repo, c.sha) for c in left_commits] == [["left.txt"], ["lib/left_helper.txt"]]
    for commit in left_commits:  # each stays in history, reached through the merge's second parent
        assert clean.repo.git("merge-base", "--is-ancestor", commit.sha, BRANCH) == ""
        assert clean.repo.git("log", "--first-parent", "--format=%H", BRANCH).count(commit.sha) == 0


def test_a_read_only_branch_and_sequential_nodes_get_no_worktree(clean: ParallelRun) -> None:
    created = records_of(clean.project, "1", WorktreeCreated)
    assert not any("reader" in record.branch or "reader" in record.path for _, record in created)
    assert len(created) == 3  # the session's own, then the two writing branches
    turns: dict[str, AgentTurn] = {t.node_id: t for t in _turns(clean.project) if t.tool_calls}
    after = turns["after"]
    assert "left.txt" in after.tool_calls[0].result and "right.txt" in after.tool_calls[0].result
    assert turns["reader"].tool_calls[0].result is not None and "hello" in turns["reader"].tool_calls[0].result


def test_clean_merge_lands_one_merge_commit_per_branch_with_trailers(clean: ParallelRun) -> None:
    assert clean.document["status"] == "success"
    repo = clean.repo
    assert repo.files_in(BRANCH) == ["README.md", "left.txt", "lib/left_helper.txt", "right.txt", "shared.txt"]
    merges = repo.git("log", "--merges", "--format=%H", BRANCH).split()
    assert len(merges) == 2
    by_branch = {trailers(repo, sha)["Orchestra-Merge"]: sha for sha in merges}
    assert set(by_branch) == {"fan:left", "fan:look"}
    for sha in by_branch.values():
        found = trailers(repo, sha)
        assert found["Orchestra-Node"] == "fan" and found["Orchestra-Session"] == "1"
        assert found["Orchestra-Pipeline"] == "par"
        parents = repo.git("log", "-1", "--format=%P", sha).split()
        assert len(parents) == 2
    merged = [record for _, record in records_of(clean.project, "1", WorktreeMerged)]
    assert sorted(m.branch for m in merged) == [f"{BRANCH}--fan-left", f"{BRANCH}--fan-look"]
    assert {m.into_branch for m in merged} == {BRANCH} and {m.node_id for m in merged} == {"fan"}
    assert clean.document["context"]["workspace.merge_conflicts"] == []
    assert "fan:left" in clean.document["context"]["workspace.merge_summary"]


def test_worktrees_and_their_branches_are_removed_after_the_clean_merge(clean: ParallelRun) -> None:
    assert sorted(clean.repo.branches()) == ["main", BRANCH]
    worktrees = clean.project / WORKTREES
    assert sorted(p.name for p in worktrees.iterdir()) == ["project"]
    assert "fan:" not in clean.repo.git("worktree", "list")


def test_the_checkpoint_after_the_fan_in_has_the_merged_head(clean: ParallelRun) -> None:
    merged_head = clean.repo.git("log", "--merges", "-1", "--format=%H", BRANCH).strip()
    checkpoints = [record for _, record in records_of(clean.project, "1", r.CheckpointRecord)]
    [after_fan] = [c for c in checkpoints if c.current_node == "fan"]
    assert after_fan.workspace_snapshot is not None
    assert after_fan.workspace_snapshot.sha_by_repo()["project"] == merged_head
    assert clean.document["repos"]["project"]["head_sha"] == clean.repo.head(BRANCH)
