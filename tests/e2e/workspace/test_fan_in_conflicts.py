"""A merge conflict at fan-in through `orchestra run`, with real repositories and the scripted model (issue 31 item
2; seed 001: "Merge conflict surfaced", "Worktree preserved on failure"): the join node takes the conflict as its
outcome; a fail edge from it reaches a fixer that works in the session worktree on the files with git's conflict
markers, committed in a merge commit; without such an edge the run fails and nothing moves."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from attrs import frozen

from orchestra_core.model import records as r
from orchestra_core.model.workspace_events import WorktreeMergeConflict, WorktreeMerged
from tests.support.environment import hermetic_env
from tests.support.git_repos import GitRepo, make_repo
from tests.support.orchestra_project import (
    SCRIPTED_PROVIDER,
    all_agent_turns,
    orchestra,
    records_of,
    trailers,
    write_files,
)

BRANCH = "orchestra/par/1"
WORKSPACE = "workspace:\n  repos:\n    project: {path: ../repo}\n"
ROUTED = """digraph par {
    start [shape=Mdiamond]; exit [shape=Msquare]
    fan [shape=component]
    left [prompt="Edit shared"]
    right [prompt="Edit shared too"]
    join [shape=tripleoctagon]
    fixer [prompt="Resolve the merge conflict"]
    start -> fan
    fan -> left -> join
    fan -> right -> join
    join -> fixer [condition="outcome=fail"]
    join -> exit [condition="outcome=success"]
    fixer -> exit
}
"""
UNROUTED = """digraph par {
    start [shape=Mdiamond]; exit [shape=Msquare]
    fan [shape=component]
    left [prompt="Edit shared"]
    right [prompt="Edit shared too"]
    join [shape=tripleoctagon]
    after [prompt="Carry on"]
    start -> fan
    fan -> left -> join
    fan -> right -> join
    join -> after -> exit
}
"""
RESOLVED = "one\nLEFT and RIGHT\nthree\n"
CASSETTE = r"""
nodes:
  left:
    - content: "Left edit."
      tool_calls:
        - {name: "project:write-file", args: {path: shared.txt, content: "one\nLEFT\nthree\n"}}
        - {name: "project:write-file", args: {path: only_left.txt, content: "l\n"}}
    - content: "Done."
  right:
    - content: "Right edit."
      tool_calls:
        - {name: "project:write-file", args: {path: shared.txt, content: "one\nRIGHT\nthree\n"}}
    - content: "Done."
  fixer:
    - content: "Reading the conflict."
      tool_calls:
        - {name: "project:read-file", args: {path: shared.txt}}
    - content: "Keeping both."
      tool_calls:
        - {name: "project:write-file", args: {path: shared.txt, content: "one\nLEFT and RIGHT\nthree\n"}}
    - content: "Done."
default: "Done."
"""


@frozen
class ConflictRun:
    project: Path
    repo: GitRepo
    base: str
    returncode: int
    document: dict[str, Any]
    stderr: str

    def run_file(self, *parts: str) -> Any:
        return json.loads((self.project / ".orchestra" / "runs" / "1").joinpath(*parts).read_text())


def _run(root: Path, pipeline: str) -> ConflictRun:
    (root / "home").mkdir()
    env = hermetic_env(root / "home")
    repo = make_repo(root / "repo", {"README.md": "hello\n", "shared.txt": "one\ntwo\nthree\n"})
    project = root / "project"
    files = {"orchestra.yaml": SCRIPTED_PROVIDER + WORKSPACE, "par.dot": pipeline, "cassette.yaml": CASSETTE}
    write_files(project, files)
    base = repo.head()
    result = orchestra("run", "par.dot", "--json", cwd=project, env=env)
    return ConflictRun(project, repo, base, result.returncode, json.loads(result.stdout), result.stderr)


@pytest.fixture(scope="module")
def routed(tmp_path_factory: pytest.TempPathFactory) -> ConflictRun:
    return _run(tmp_path_factory.mktemp("routed"), ROUTED)


@pytest.fixture(scope="module")
def unrouted(tmp_path_factory: pytest.TempPathFactory) -> ConflictRun:
    return _run(tmp_path_factory.mktemp("unrouted"), UNROUTED)


def _first_parents(run: ConflictRun) -> list[str]:
    """The session branch's commits, newest first, following first parents."""
    return run.repo.git("log", "--first-parent", "--format=%H", BRANCH).split()


def _tips(run: ConflictRun) -> dict[str, str]:
    """Each branch agent's commit (the head of its git branch at the join)."""
    return {t.node_id: t.commits[0].sha for t in all_agent_turns(run.project, "1") if t.commits and t.node_id != "fixer"}


def test_the_join_fails_with_the_conflict_and_its_fail_edge_reaches_the_fixer(routed: ConflictRun) -> None:
    assert routed.returncode == 0, routed.stderr
    document = routed.document
    assert document["status"] == "success"
    assert document["node_outcomes"] == {
        "start": "success", "left": "success", "right": "success", "fan": "success", "join": "fail",
        "fixer": "success", "exit": "success",
    }  # fmt: skip
    reason = (
        f"merge conflict at fan-in of fan: project: {BRANCH}--fan-right (fan:right) into {BRANCH} conflicts in "
        "shared.txt"
    )
    status = routed.run_file("join", "status.json")
    assert (status["outcome"], status["failure_reason"]) == ("fail", reason)
    checkpoint = routed.run_file("checkpoint.json")
    assert checkpoint["node_outcomes"]["join"]["status"] == "fail"
    assert checkpoint["node_outcomes"]["join"]["failure_reason"] == reason
    [conflict] = [record for _, record in records_of(routed.project, "1", WorktreeMergeConflict)]
    assert (conflict.node_id, conflict.conflicting_files) == ("fan", ("shared.txt",))


def test_the_fixer_reads_the_markers_in_the_session_worktree_and_has_the_conflict_in_its_context(
    routed: ConflictRun,
) -> None:
    [read, write] = [t for t in all_agent_turns(routed.project, "1") if t.node_id == "fixer" and t.tool_calls]
    seen = read.tool_calls[0].result or ""
    assert "<<<<<<<" in seen and "LEFT" in seen and "RIGHT" in seen and ">>>>>>>" in seen
    assert write.commits[0].branch == BRANCH  # the session branch, not a parallel one
    context = routed.run_file("fixer", "context.json")
    values = context.get("context", context)
    [details] = values["workspace.merge_conflicts"]
    assert (details["repo"], details["files"], details["branch_path"]) == ("project", ["shared.txt"], "fan:right")
    assert details["branches"] == [f"{BRANCH}--fan-left", f"{BRANCH}--fan-right"]
    assert "<<<<<<<" in details["hunks"][0]["text"]
    assert details["commit"] == _first_parents(routed)[1]
    assert "conflict markers" in values["workspace.merge_summary"]
    prompt = (routed.project / ".orchestra" / "runs" / "1" / "fixer" / "prompt.md").read_text()
    assert "workspace.merge_conflicts" in prompt and "shared.txt" in prompt


def test_the_log_holds_the_merges_then_the_fixers_resolution(routed: ConflictRun) -> None:
    repo, tips = routed.repo, _tips(routed)
    fixed, conflicted, clean, base = _first_parents(routed)[:4]
    assert base == routed.base
    assert repo.git("log", "-1", "--format=%P", clean).split() == [routed.base, tips["left"]]
    assert repo.git("log", "-1", "--format=%P", conflicted).split() == [clean, tips["right"]]
    merge = trailers(repo, conflicted)
    assert (merge["Orchestra-Merge"], merge["Orchestra-Conflicts"], merge["Orchestra-Node"]) == (
        "fan:right", "shared.txt", "fan",
    )  # fmt: skip
    message = repo.git("log", "-1", "--format=%B", conflicted)
    assert "conflicts left for resolution" in message.splitlines()[0] and "for fixer to resolve" in message
    marked = repo.show(conflicted, "shared.txt")
    assert marked.startswith("one\n<<<<<<< ") and "LEFT\n=======\nRIGHT\n>>>>>>> " in marked
    assert trailers(repo, fixed)["Orchestra-Node"] == "fixer"
    assert repo.show(fixed, "shared.txt") == RESOLVED and repo.show(BRANCH, "only_left.txt") == "l\n"
    assert routed.document["repos"]["project"]["head_sha"] == fixed
    merged = {record.branch: record for _, record in records_of(routed.project, "1", WorktreeMerged)}
    assert merged[f"{BRANCH}--fan-right"].conflicting_files == ("shared.txt",)
    assert merged[f"{BRANCH}--fan-right"].merge_sha == conflicted


def test_the_branch_worktrees_go_once_the_merge_landed_and_the_checkpoint_has_it(routed: ConflictRun) -> None:
    assert sorted(routed.repo.branches()) == ["main", BRANCH]
    assert not list((routed.project / ".orchestra" / "worktrees" / "1").glob("fan:*"))
    conflicted = _first_parents(routed)[1]
    checkpoints = [record for _, record in records_of(routed.project, "1", r.CheckpointRecord)]
    [after_join] = [c for c in checkpoints if c.current_node == "join"]
    assert after_join.workspace_snapshot is not None
    assert after_join.workspace_snapshot.sha_by_repo()["project"] == conflicted


def test_without_a_fail_edge_the_run_fails_naming_the_conflict_and_nothing_moves(unrouted: ConflictRun) -> None:
    assert unrouted.returncode == 1
    document = unrouted.document
    reason = (
        f"stage join failed: merge conflict at fan-in of fan: project: {BRANCH}--fan-right (fan:right) into "
        f"{BRANCH} conflicts in shared.txt"
    )
    assert document["failure_reason"] == reason and reason in unrouted.stderr
    assert document["node_outcomes"]["fan"] == "success" and document["node_outcomes"]["join"] == "fail"
    assert "after" not in document["completed_nodes"]
    repo = unrouted.repo
    assert repo.head(BRANCH) == unrouted.base
    assert sorted(repo.branches()) == sorted([BRANCH, f"{BRANCH}--fan-left", f"{BRANCH}--fan-right", "main"])
    worktrees = unrouted.project / ".orchestra" / "worktrees" / "1"
    assert (worktrees / "fan:left" / "project" / "shared.txt").read_text() == "one\nLEFT\nthree\n"
    assert (worktrees / "fan:right" / "project" / "shared.txt").read_text() == "one\nRIGHT\nthree\n"
    assert not records_of(unrouted.project, "1", WorktreeMerged)
    assert unrouted.run_file("join", "status.json")["outcome"] == "fail"


# Between the failed join and the fixer, a tool node kills the runner (once), then counts the markers it sees.
KILL_ONCE = "test -e {marker} || {{ touch {marker}; kill -9 $PPID; }}; grep -c '^<<<<<<<' shared.txt"


def test_a_run_killed_between_the_failed_join_and_the_fixer_resumes_on_the_landed_merge(tmp_path: Path) -> None:
    pipeline = ROUTED.replace(
        'join -> fixer [condition="outcome=fail"]',
        f'look [shape=parallelogram, tool_command="{KILL_ONCE.format(marker=tmp_path / "killed-once")}"]\n'
        '    join -> look [condition="outcome=fail"]\n    look -> fixer',
    )
    (tmp_path / "home").mkdir()
    env = hermetic_env(tmp_path / "home")
    repo = make_repo(tmp_path / "repo", {"README.md": "hello\n", "shared.txt": "one\ntwo\nthree\n"})
    project = tmp_path / "project"
    write_files(project, {"orchestra.yaml": SCRIPTED_PROVIDER + WORKSPACE, "par.dot": pipeline, "cassette.yaml": CASSETTE})
    first = orchestra("run", "par.dot", cwd=project, env=env)
    assert first.returncode == -9, first.stderr + first.stdout
    checkpoint = json.loads((project / ".orchestra" / "runs" / "1" / "checkpoint.json").read_text())
    assert (checkpoint["current_node"], checkpoint["next_node"]) == ("join", "look")
    landed = repo.git("log", "-1", "--format=%H", BRANCH).strip()
    assert trailers(repo, landed)["Orchestra-Conflicts"] == "shared.txt"

    resumed = orchestra("resume", "1", "--json", cwd=project, env=env)
    assert resumed.returncode == 0, resumed.stderr
    document = json.loads(resumed.stdout)
    assert document["status"] == "success" and document["context"]["tool.output"].strip() == "1"
    history = repo.git("log", "--first-parent", "--format=%H", BRANCH).split()
    assert history[1] == landed  # landed once, before the kill; the fixer's commit on top of it
    assert trailers(repo, history[0])["Orchestra-Node"] == "fixer" and repo.show(BRANCH, "shared.txt") == RESOLVED
    assert len(repo.git("log", "--format=%H", "--grep=conflicts left for resolution", BRANCH).split()) == 1
    assert not list((project / ".orchestra" / "worktrees" / "1").glob("fan:*"))
