"""A traced project for tests and the bench: a scripted LLM node whose tool calls write a file (a commit) and fail
to read one, a tool node that writes a file, and a parallel fan-out of two writing agents, in one git repo."""

from __future__ import annotations

from pathlib import Path

from tests.support.git_repos import GitRepo, make_repo
from tests.support.orchestra_project import SCRIPTED_PROVIDER, write_files

PIPELINE = """digraph traced {
  start [shape=Mdiamond]; exit [shape=Msquare]
  plan [prompt="Write the plan"]
  build [shape=parallelogram, tool_command="echo built > build.txt"]
  fan [shape=component]
  left [prompt="Write the left part"]
  right [prompt="Write the right part"]
  join [shape=tripleoctagon]
  start -> plan -> build -> fan
  fan -> left -> join
  fan -> right -> join
  join -> exit
}
"""
CASSETTE = r"""
nodes:
  plan:
    - content: "Planning."
      tool_calls:
        - {name: "project:write-file", args: {path: plan.md, content: "the plan\n"}}
        - {name: "project:read-file", args: {path: missing.md}}
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
default: "Done."
"""
WORKSPACE = "workspace:\n  repos:\n    project: {path: ../repo}\n"


def traced_project(root: Path) -> tuple[Path, GitRepo]:
    """`root/project` (orchestra.yaml, traced.dot, cassette.yaml) working in the repo `root/repo`."""
    repo = make_repo(root / "repo", {"README.md": "hello\n"})
    project = root / "project"
    files = {"orchestra.yaml": SCRIPTED_PROVIDER + WORKSPACE, "traced.dot": PIPELINE, "cassette.yaml": CASSETTE}
    write_files(project, files)
    return project, repo
