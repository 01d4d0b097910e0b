"""`.worktreeinclude` through `orchestra run`: the session worktree (and a parallel branch's) has the ignored
files the repo lists, tool nodes and agents see them, and no per-turn commit ever contains them (issue 17)."""

from __future__ import annotations

from pathlib import Path

from tests.support.git_repos import make_repo
from tests.support.orchestra_project import SCRIPTED_PROVIDER, orchestra

PIPELINE = """digraph inc {
    start [shape=Mdiamond]; exit [shape=Msquare]
    implement [prompt="Write the greeting"]
    fan [shape=component]
    left [prompt="Write the left module"]
    look [shape=parallelogram, tool_command="cat .env; touch seen-by-tool"]
    join [shape=tripleoctagon]
    start -> implement -> fan
    fan -> left -> join
    fan -> look -> join
    join -> exit
}
"""
CASSETTE = r"""
nodes:
  implement:
    - content: "Writing it, and the config too."
      tool_calls:
        - {name: "project:read-file", args: {path: .env}}
        - {name: "project:write-file", args: {path: greeting.txt, content: "hello\n"}}
        - {name: "project:write-file", args: {path: .env, content: "SECRET=agent\n"}}
    - content: "Done."
  left:
    - content: "The left module."
      tool_calls:
        - {name: "project:write-file", args: {path: left.txt, content: "left\n"}}
    - content: "Done."
default: "Done."
"""
CONFIG = SCRIPTED_PROVIDER + "workspace:\n  repos:\n    project: {path: .}\n"


def test_listed_ignored_files_reach_every_worktree_and_are_never_committed(tmp_path: Path) -> None:
    repo = make_repo(
        tmp_path / "project",
        {
            "orchestra.yaml": CONFIG,
            "inc.dot": PIPELINE,
            "cassette.yaml": CASSETTE,
            ".gitignore": ".env\nseen-by-tool\n",
            ".worktreeinclude": ".env\n",
        },
    )
    repo.write(".env", "SECRET=1\n")
    base = repo.head()
    result = orchestra("run", "inc.dot", "--quiet", cwd=repo.path)
    assert result.returncode == 0, result.stderr + result.stdout
    branch = "orchestra/inc/1"
    committed = repo.git("log", "--format=", "--name-only", f"{base}..{branch}").split()
    assert sorted(set(committed)) == ["greeting.txt", "left.txt"]
    worktree = repo.path / ".orchestra" / "worktrees" / "1" / "project"
    assert (worktree / ".env").read_text() == "SECRET=agent\n"  # the agent's own edit stays uncommitted
    assert (repo.path / ".env").read_text() == "SECRET=1\n"  # the user's file is a source, never a target
    outputs = list((repo.path / ".orchestra" / "runs" / "1").rglob("tool_output.txt"))
    assert outputs and "SECRET=1" in outputs[0].read_text()  # the parallel branch's worktree had its copy
    assert repo.status() == ""
