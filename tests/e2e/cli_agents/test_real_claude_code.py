"""A real Claude Code run against Anthropic's API. Opt-in: ORCHESTRA_REAL_LLM=1, ANTHROPIC_API_KEY (or a logged-in
`claude`), and `claude` on PATH or the pinned one installed; otherwise skipped (never in CI)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.support.cli_agents import BIN_DIR
from tests.support.git_repos import GitRepo, git
from tests.support.orchestra_project import agent_turns, committed_files, orchestra, write_files

pytestmark = pytest.mark.skipif(
    os.environ.get("ORCHESTRA_REAL_LLM") != "1", reason="set ORCHESTRA_REAL_LLM=1 to run a real Claude Code"
)

PIPELINE = """digraph real {
  start [shape=Mdiamond]
  exit [shape=Msquare]
  implement [prompt="Create the file hello.txt containing exactly the line: hello from claude. Use the project__write-file tool, then stop.", timeout="300s"]
  start -> implement -> exit
}
"""


def test_real_claude_code_writes_through_orchestras_tools(tmp_path: Path) -> None:
    claude = shutil.which("claude") or (str(BIN_DIR / "claude") if (BIN_DIR / "claude").exists() else None)
    if claude is None:
        pytest.skip("no claude executable")
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    GitRepo(root).write(".gitignore", ".orchestra/\n")
    GitRepo(root).commit_all("initial")
    config = {
        "backend": "claude-code",
        "workspace": {"repos": {"project": {"path": "."}}},
        "claude_code": {"command": claude, "model": os.environ.get("ORCHESTRA_CLAUDE_MODEL", "haiku")},
    }
    write_files(root, {"orchestra.yaml": json.dumps(config), "pipeline.dot": PIPELINE})
    result = orchestra("run", "pipeline.dot", "--json", cwd=root, timeout=400)
    assert result.returncode == 0, result.stderr + result.stdout
    document = json.loads(result.stdout)
    turns = [turn for _, turn in agent_turns(root, document["session_id"])]
    sha = next(turn.git_sha for turn in turns if turn.git_sha)
    assert sha and committed_files(GitRepo(root), sha) == ["hello.txt"]
