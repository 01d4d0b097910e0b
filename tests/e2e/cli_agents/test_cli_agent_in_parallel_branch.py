"""A Claude Code node in a parallel branch works in that branch's worktree: its MCP writes are committed on
the branch's git branch, next to a LangGraph branch, and both are merged at the fan-in."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli_agents import claude_binary, claude_env
from tests.support.fake_provider_api import FakeAnthropicAPI, Reply, ToolUse
from tests.support.git_repos import GitRepo, git
from tests.support.orchestra_project import all_agent_turns, committed_files, orchestra, trailers, write_files

PIPELINE = """digraph par {
  start [shape=Mdiamond]; exit [shape=Msquare]
  fan [shape=component]
  left [prompt="Write left.txt", backend="claude-code"]
  right [prompt="Write right.txt"]
  join [shape=tripleoctagon]
  start -> fan
  fan -> left -> join
  fan -> right -> join
  join -> exit
}
"""

CASSETTE = """nodes:
  right:
    - content: "The right file."
      tool_calls:
        - name: "project:write-file"
          args: {path: right.txt, content: "right\\n"}
    - content: "Done."
default: "Done."
"""


def test_a_claude_code_branch_writes_in_its_worktree_and_is_merged(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    repo = GitRepo(root)
    repo.write("README.md", "hello\n")
    repo.write(".gitignore", ".orchestra/\n")
    repo.commit_all("initial")
    config = {
        "providers": {"default": "scripted", "scripted": {"cassette": "cassette.yaml"}},
        "backend": "langgraph",
        "workspace": {"repos": {"project": {"path": "."}}},
        "claude_code": {"command": str(claude_binary()), "model": "claude-test-model"},
    }
    write_files(root, {"orchestra.yaml": json.dumps(config), "par.dot": PIPELINE, "cassette.yaml": CASSETTE})
    look = ToolUse("mcp__orchestra__project__list-files", {})
    write = ToolUse("mcp__orchestra__project__write-file", {"path": "left.txt", "content": "left\n"})
    with FakeAnthropicAPI([Reply("Looking.", [look]), Reply("Writing.", [write]), Reply("Done.")]) as api:
        result = orchestra("run", "par.dot", "--json", cwd=root, env=claude_env(api.base_url, tmp_path / "home"))
        listing = [
            block
            for block in api.requests[1]["messages"][-1]["content"]
            if isinstance(block, dict) and block.get("type") == "tool_result"
        ]
    assert result.returncode == 0, result.stderr + result.stdout
    document = json.loads(result.stdout)
    assert document["status"] == "success", document
    assert "right.txt" not in json.dumps(listing)  # the left worktree does not see the right branch's file

    turns = all_agent_turns(root, document["session_id"])
    left_sha = next(turn.git_sha for turn in turns if turn.node_id == "left" and turn.git_sha)
    assert left_sha and committed_files(repo, left_sha) == ["left.txt"]
    assert trailers(repo, left_sha)["Orchestra-Provider"] == "anthropic"
    branch = document["repos"]["project"]["branch"]
    merges = git(root, "log", "--merges", "--format=%H %P", f"main..{branch}").splitlines()
    merged_parents = {parent for line in merges for parent in line.split()[2:]}
    assert left_sha in merged_parents
    assert git(root, "show", f"{branch}:left.txt") == "left\n" and git(root, "show", f"{branch}:right.txt") == "right\n"
    assert not list((root / ".orchestra" / "worktrees" / document["session_id"]).glob("fan:*"))
