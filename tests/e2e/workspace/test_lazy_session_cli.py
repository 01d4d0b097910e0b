"""`orchestra run` makes the session's worktree lazy when every node reads files only through Orchestra's own
tools (scripted agents: no file written at setup, reads and merges as with a full checkout), and a full checkout
before any node runs when one needs every file (a tool node; an agent with a command tool)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.environment import hermetic_env
from tests.support.git_repos import GitRepo, make_repo
from tests.support.orchestra_project import SCRIPTED_PROVIDER, all_agent_turns, run_json, write_files

WORKTREE = ".orchestra/worktrees/1/project"
FILES = {"README.md": "hello\n", "shared.txt": "one\ntwo\nthree\n", "src/deep/mod.py": "VALUE = 1\n"}
AGENTS_ONLY = """digraph lazy {
    start [shape=Mdiamond]; exit [shape=Msquare]
    plan [prompt="Plan"]
    fan [shape=component]
    left [prompt="Left"]
    right [prompt="Right"]
    join [shape=tripleoctagon]
    after [prompt="Check"]
    start -> plan -> fan
    fan -> left -> join
    fan -> right -> join
    join -> after -> exit
}
"""
CASSETTE = r"""
nodes:
  plan:
    - content: "Reading, then planning."
      tool_calls:
        - {name: "project:read-file", args: {path: src/deep/mod.py}}
        - {name: "project:write-file", args: {path: plan.txt, content: "plan\n"}}
    - content: "Done."
  left:
    - content: "Left."
      tool_calls:
        - {name: "project:write-file", args: {path: left.txt, content: "left\n"}}
    - content: "Done."
  right:
    - content: "Right."
      tool_calls:
        - {name: "project:write-file", args: {path: right.txt, content: "right\n"}}
    - content: "Done."
  after:
    - content: "Both are there."
      tool_calls:
        - {name: "project:read-file", args: {path: left.txt}}
        - {name: "project:list-files", args: {}}
    - content: "Done."
default: "Done."
"""
WORKSPACE = "workspace:\n  repos:\n    project: {path: ../repo}\n"


def _run(root: Path, pipeline: str, cassette: str, config: str = "") -> tuple[Path, GitRepo, dict[str, Any]]:
    (root / "home").mkdir()
    env = hermetic_env(root / "home")
    repo = make_repo(root / "repo", FILES)
    project = root / "project"
    write_files(project, {"orchestra.yaml": SCRIPTED_PROVIDER + WORKSPACE + config, "p.dot": pipeline, "cassette.yaml": cassette})
    return project, repo, run_json("run", "p.dot", cwd=project, env=env)


def _on_disk(worktree: Path) -> list[str]:
    return sorted(p.relative_to(worktree).as_posix() for p in worktree.rglob("*") if p.is_file() and p.name != ".git")


def _is_lazy(worktree: Path) -> bool:
    git_dir = Path((worktree / ".git").read_text().strip().removeprefix("gitdir: "))
    return (git_dir / "orchestra-lazy").is_file()


def _results(project: Path, node: str) -> list[str]:
    return [call.result or "" for turn in all_agent_turns(project, "1") if turn.node_id == node for call in turn.tool_calls]


@pytest.fixture(scope="module")
def agents_only(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, GitRepo, dict[str, Any]]:
    return _run(tmp_path_factory.mktemp("lazy"), AGENTS_ONLY, CASSETTE)


def test_a_run_of_agents_with_own_tools_gets_a_lazy_session_worktree(agents_only: Any) -> None:
    project, repo, document = agents_only
    assert document["status"] == "success"
    worktree = project / WORKTREE
    assert _is_lazy(worktree)
    assert _on_disk(worktree) == ["plan.txt"]  # only what the session's own agents wrote
    assert repo.status(worktree) == ""


def test_reads_and_the_merge_at_fan_in_are_those_of_a_full_checkout(agents_only: Any) -> None:
    project, repo, _ = agents_only
    assert "VALUE = 1" in _results(project, "plan")[0]
    read_left, listing = _results(project, "after")
    assert "left" in read_left
    assert {"README.md", "shared.txt", "src/deep/mod.py", "plan.txt", "left.txt", "right.txt"} <= set(listing.split("\n"))
    branch = "orchestra/lazy/1"
    assert {"plan.txt", "left.txt", "right.txt", "README.md"} <= set(repo.files_in(branch))
    assert repo.show(branch, "left.txt") == "left\n" and repo.show(branch, "right.txt") == "right\n"


def test_a_tool_node_gets_a_full_session_checkout_from_the_start(tmp_path: Path) -> None:
    pipeline = AGENTS_ONLY.replace('after [prompt="Check"]', 'after [shape=parallelogram, tool_command="cat shared.txt left.txt"]')
    project, repo, document = _run(tmp_path, pipeline, CASSETTE)
    assert document["status"] == "success"
    worktree = project / WORKTREE
    assert not _is_lazy(worktree)
    assert {"README.md", "shared.txt", "src/deep/mod.py", "left.txt", "right.txt"} <= set(_on_disk(worktree))
    assert repo.status(worktree) == ""


def test_an_agent_with_a_command_tool_gets_a_full_checkout_before_any_node_runs(tmp_path: Path) -> None:
    config = (
        "  tools:\n    project:\n      show: {command: \"cat shared.txt\"}\n"
        "agents:\n  checker:\n    tools: [project:show]\n"
    )
    pipeline = 'digraph c { start [shape=Mdiamond]; exit [shape=Msquare]; check [prompt="Check", agent=checker]; start -> check -> exit }'
    cassette = 'nodes:\n  check:\n    - content: "Showing."\n      tool_calls:\n        - {name: "project:show", args: {}}\n    - content: "Done."\ndefault: "Done."\n'
    project, _, document = _run(tmp_path, pipeline, cassette, config)
    assert document["status"] == "success"
    assert not _is_lazy(project / ".orchestra/worktrees/1/project")
    assert "three" in _results(project, "check")[0]
