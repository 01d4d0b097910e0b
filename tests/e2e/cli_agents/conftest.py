"""Projects whose codergen nodes run the real Claude Code / Codex CLIs against a scripted fake provider API."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli_agents import claude_binary, claude_env, codex_binary, codex_env, codex_provider_args
from tests.support.git_repos import GitRepo, git
from tests.support.orchestra_project import orchestra, write_files

PIPELINE = """digraph impl {
  graph [goal="Add two modules"]
  start [shape=Mdiamond]
  exit [shape=Msquare]
  implement [prompt="Write a.py and b.py"%s]
  start -> implement -> exit
}
"""


class AgentProject:
    """A git repo that is also the Orchestra project, with orchestra.yaml for one CLI agent backend."""

    def __init__(self, root: Path, home: Path, backend: str) -> None:
        self.root = root
        self.home = home
        self.backend = backend
        self.repo = GitRepo(root)

    def configure(
        self, agent_settings: dict[str, Any] | None = None, node_attrs: str = "", extra: dict[str, Any] | None = None
    ) -> None:
        """orchestra.yaml for the agent (`agent_settings` in its section, `extra` top-level keys) and the pipeline
        (`node_attrs` added to the `implement` node)."""
        binary = claude_binary() if self.backend == "claude-code" else codex_binary()
        section = {"command": str(binary), **(agent_settings or {})}
        key = self.backend.replace("-", "_")
        config = {
            "workspace": {"repos": {"project": {"path": "."}}},
            "backend": self.backend,
            key: section,
            **(extra or {}),
        }
        write_files(
            self.root, {"orchestra.yaml": json.dumps(config, indent=2), "pipeline.dot": PIPELINE % node_attrs}
        )

    def run(self, base_url: str, *args: str, timeout: float = 120) -> Any:
        env = (
            claude_env(base_url, self.home)
            if self.backend == "claude-code"
            else codex_env(base_url, self.home)
        )
        return orchestra("run", "pipeline.dot", "--json", *args, cwd=self.root, env=env, timeout=timeout)

    def session_branch_log(self, branch: str) -> list[str]:
        return git(self.root, "log", "--format=%H", f"main..{branch}").split()


@pytest.fixture
def make_project(tmp_path: Path) -> Callable[[str], AgentProject]:
    def make(backend: str) -> AgentProject:
        root = tmp_path / "project"
        root.mkdir()
        git(root, "init", "-q", "-b", "main")
        GitRepo(root).write("README.md", "hello\n")
        GitRepo(root).write(".gitignore", ".orchestra/\n")
        GitRepo(root).commit_all("initial")
        return AgentProject(root, tmp_path / "home", backend)

    return make


def codex_settings(base_url: str, extra: Sequence[str] = ()) -> dict[str, Any]:
    """The `codex:` section that points Codex at the fake Responses API."""
    return {"args": [*codex_provider_args(base_url), *extra]}
