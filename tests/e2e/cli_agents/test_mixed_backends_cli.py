"""One pipeline, two kinds of agent: a Claude Code implementer (`backend="claude-code"` on the node) and a
LangGraph reviewer (the run's backend, played by the scripted provider); both commit on one session branch."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli_agents import claude_binary, claude_env
from tests.support.fake_provider_api import FakeAnthropicAPI, Reply, ToolUse
from tests.support.git_repos import GitRepo, git
from tests.support.orchestra_project import agent_turns, committed_files, orchestra, trailers, write_files

PIPELINE = """digraph mixed {
  graph [goal="Add a module, then review it"]
  start [shape=Mdiamond]
  exit [shape=Msquare]
  implement [prompt="Write a.py", backend="claude-code"]
  review [prompt="Review a.py and note it"]
  start -> implement -> review -> exit
}
"""

CASSETTE = """nodes:
  review:
    - content: "Reading it."
      tool_calls:
        - name: "project:read-file"
          args: {path: a.py}
    - content: "Noting the review."
      tool_calls:
        - name: "project:write-file"
          args: {path: REVIEW.md, content: "a.py looks fine\\n"}
    - content: "Reviewed."
commit_messages:
  - "Add a review of a.py"
default: "Done."
"""


def test_a_claude_code_node_and_a_langgraph_node_share_one_session_branch(tmp_path: Path) -> None:
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
    write_files(
        root, {"orchestra.yaml": json.dumps(config), "pipeline.dot": PIPELINE, "cassette.yaml": CASSETTE}
    )
    script = [Reply("Writing.", [ToolUse("mcp__orchestra__project__write-file", {"path": "a.py", "content": "A = 1\n"})]),
              Reply("Written.")]
    with FakeAnthropicAPI(script) as api:
        result = orchestra("run", "pipeline.dot", "--json", cwd=root, env=claude_env(api.base_url, tmp_path / "home"))
    assert result.returncode == 0, result.stderr + result.stdout
    document = json.loads(result.stdout)
    assert document["status"] == "success", document

    turns = [turn for _, turn in agent_turns(root, document["session_id"])]
    by_node = {(turn.node_id, turn.provider) for turn in turns}
    assert ("implement", "anthropic") in by_node and ("review", "scripted") in by_node
    implement_sha = next(turn.git_sha for turn in turns if turn.node_id == "implement" and turn.git_sha)
    review_sha = next(turn.git_sha for turn in turns if turn.node_id == "review" and turn.git_sha)
    assert implement_sha and review_sha
    assert committed_files(repo, implement_sha) == ["a.py"] and committed_files(repo, review_sha) == ["REVIEW.md"]
    assert trailers(repo, implement_sha)["Orchestra-Model"] == "claude-test-model"
    branch = document["repos"]["project"]["branch"]
    assert git(root, "log", "--format=%H", f"main..{branch}").split() == [review_sha, implement_sha]
