"""Fixtures for backend tests: a temp repo, real file tools, a scripted provider and a LangGraph backend."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from attrs import frozen

from orchestra_adapters.backends.langgraph_backend import LangGraphBackend
from orchestra_adapters.llm.chat_model_factory import LangChainChatModelFactory
from orchestra_core.agents.repo_context import RepoContext
from orchestra_core.agents.tools import AgentTool, WriteTracker
from orchestra_core.model.context import Context
from orchestra_core.model.graph import Node
from orchestra_core.model.settings import OrchestraSettings, ProviderSettings, ProvidersSettings


@frozen
class Agent:
    """A resolved agent as the backends read it."""

    provider: str = "scripted"
    model: str = "scripted-sonnet"


class StaticResolver:
    """Every node gets the same provider and model."""

    def __init__(self, agent: Agent | None = None) -> None:
        self.agent = agent or Agent()

    def resolve(self, node: Node, context: Context) -> Agent:
        return self.agent


def file_tools(repo: RepoContext, tracker: WriteTracker) -> list[AgentTool]:
    """Real read/write/list tools on `repo`; writes are recorded in `tracker`."""

    def read_file(path: str) -> str:
        return repo.resolve_path(path).read_text(encoding="utf-8")

    def write_file(path: str, content: str) -> str:
        target = repo.resolve_path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
        tracker.record(repo.name, repo.relative_path(path).as_posix())
        return f"Wrote {len(content)} characters to {path}"

    def list_files() -> str:
        return "\n".join(
            sorted(p.relative_to(repo.root).as_posix() for p in repo.root.rglob("*") if p.is_file())
        )

    def explode() -> str:
        raise RuntimeError("the tool itself crashed")

    return [
        AgentTool(f"{repo.name}:read-file", "Read a file.", read_file),
        AgentTool(f"{repo.name}:write-file", "Write a file.", write_file, writes_files=True),
        AgentTool(f"{repo.name}:list-files", "List files.", list_files),
        AgentTool(f"{repo.name}:explode", "Always fails.", explode),
    ]


class RepoToolset:
    """The file tools of one repo for every node."""

    def __init__(self, repo: RepoContext) -> None:
        self.repo = repo

    def tools_for(
        self, node: Node, agent: Agent, context: Context, tracker: WriteTracker
    ) -> Sequence[AgentTool]:
        return file_tools(self.repo, tracker)


@pytest.fixture
def repo(tmp_path: Path) -> RepoContext:
    root = tmp_path / "project"
    root.mkdir()
    (root / "README.md").write_text("# Demo\n", encoding="utf-8")
    return RepoContext("project", root)


@pytest.fixture
def write_cassette(tmp_path: Path) -> Callable[[str], OrchestraSettings]:
    """Write a cassette beside an orchestra.yaml and return settings selecting the scripted provider."""

    def write(text: str) -> OrchestraSettings:
        (tmp_path / "cassette.yaml").write_text(text, encoding="utf-8")
        return OrchestraSettings(
            providers=ProvidersSettings("scripted", {"scripted": ProviderSettings(cassette="cassette.yaml")}),
            source_path=tmp_path / "orchestra.yaml",
        )

    return write


@pytest.fixture
def make_backend(
    tmp_path: Path, repo: RepoContext, write_cassette: Callable[[str], OrchestraSettings]
) -> Callable[..., LangGraphBackend]:
    """A LangGraph backend playing `cassette`, with agent state in `.orchestra/agents.db`."""
    made: list[LangGraphBackend] = []

    def make(cassette: str, **kwargs: object) -> LangGraphBackend:
        factory = LangChainChatModelFactory(write_cassette(cassette), environ={})
        backend = LangGraphBackend(
            factory, StaticResolver(), RepoToolset(repo), tmp_path / ".orchestra" / "agents.db", **kwargs
        )
        made.append(backend)
        return backend

    yield make
    for backend in made:
        backend.close()
