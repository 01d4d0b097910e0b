"""The LangGraph backend's turn commits hold each turn's writes as it made them, with a commit message model that
takes a second: the agent loop waits for the commit, so a later turn's edit never reaches an earlier commit
(the CLI agents' side of this promise: tests/e2e/cli_agents/test_exact_turn_commits.py)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.git_repos import make_repo
from tests.support.orchestra_project import (
    SCRIPTED_PROVIDER,
    agent_turns,
    committed_files,
    orchestra,
    write_files,
)

PIPELINE = """digraph impl {
  graph [goal="Add two modules"]
  start [shape=Mdiamond]
  exit [shape=Msquare]
  implement [prompt="Write a.py and b.py"]
  start -> implement -> exit
}
"""
CASSETTE = """\
delay: 1
nodes:
  implement:
    - content: "Module a."
      tool_calls:
        - {name: "project:write-file", args: {path: a.py, content: "A = 1\\n"}}
    - content: "Checking it."
      tool_calls:
        - {name: "project:read-file", args: {path: a.py}}
    - content: "Module b, and A becomes 3."
      tool_calls:
        - {name: "project:write-file", args: {path: b.py, content: "B = 2\\n"}}
        - {name: "project:edit-file", args: {path: a.py, old_text: "A = 1", new_text: "A = 3"}}
    - content: "Both modules are written."
commit_messages:
  - "Add module a"
  - "Add module b and set A to 3"
"""


def test_each_langgraph_turn_commit_holds_that_turns_writes(tmp_path: Path) -> None:
    root = tmp_path / "project"
    repo = make_repo(root, {"README.md": "hello\n", ".gitignore": ".orchestra/\n"})
    config = SCRIPTED_PROVIDER + "workspace:\n  repos:\n    project: {path: .}\n"
    write_files(root, {"orchestra.yaml": config, "pipeline.dot": PIPELINE, "cassette.yaml": CASSETTE})
    result = orchestra("run", "pipeline.dot", "--json", cwd=root)
    assert result.returncode == 0, result.stderr + result.stdout
    document = json.loads(result.stdout)

    turns = [turn for _, turn in agent_turns(root, document["session_id"])]
    assert [turn.files_written for turn in turns] == [("project:a.py",), (), ("project:b.py", "project:a.py"), ()]
    assert "A = 1" in (turns[1].tool_calls[0].result or "") and turns[1].git_sha is None
    first, third = turns[0].git_sha or "", turns[2].git_sha or ""
    assert committed_files(repo, first) == ["a.py"] and repo.show(first, "a.py") == "A = 1\n"
    assert committed_files(repo, third) == ["a.py", "b.py"]
    assert repo.show(third, "a.py") == "A = 3\n" and repo.show(third, "b.py") == "B = 2\n"
    assert repo.log(f"main..{document['repos']['project']['branch']}") == [third, first]
