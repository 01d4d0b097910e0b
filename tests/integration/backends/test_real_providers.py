"""Real providers end to end (cheap models). Runs only with ORCHESTRA_REAL_LLM=1 and the provider's key set."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from orchestra_adapters.backends.direct_backend import DirectLLMBackend
from orchestra_adapters.backends.langgraph_backend import LangGraphBackend
from orchestra_adapters.llm.chat_model_factory import LangChainChatModelFactory
from orchestra_core.agents.repo_context import RepoContext
from orchestra_core.model.context import Context
from orchestra_core.model.graph import Node
from orchestra_core.model.settings import OrchestraSettings, ProviderSettings, ProvidersSettings
from orchestra_core.model.turn import AgentTurn

from .conftest import Agent, RepoToolset, StaticResolver

CHEAP_MODELS = {
    "anthropic": ("ANTHROPIC_API_KEY", "langchain_anthropic", "claude-3-5-haiku-latest"),
    "openai": ("OPENAI_API_KEY", "langchain_openai", "gpt-4o-mini"),
}

pytestmark = [
    pytest.mark.real_llm,
    pytest.mark.skipif(
        os.environ.get("ORCHESTRA_REAL_LLM") != "1", reason="set ORCHESTRA_REAL_LLM=1 to call real providers"
    ),
]


def _provider(name: str) -> tuple[LangChainChatModelFactory, StaticResolver]:
    variable, module, model = CHEAP_MODELS[name]
    if not os.environ.get(variable) or importlib.util.find_spec(module) is None:
        pytest.skip(f"{name}: needs {variable} and pip install 'orchestra[{name}]'")
    settings = OrchestraSettings(providers=ProvidersSettings(name, {name: ProviderSettings(max_tokens=512)}))
    return LangChainChatModelFactory(settings), StaticResolver(Agent(name, model))


@pytest.mark.parametrize("name", sorted(CHEAP_MODELS))
def test_direct_backend_answers(name: str) -> None:
    factory, resolver = _provider(name)
    answer = DirectLLMBackend(factory, resolver).run(
        Node("ask"), "Reply with the single word: pong", Context()
    )
    assert isinstance(answer, str) and "pong" in answer.lower()


@pytest.mark.parametrize("name", sorted(CHEAP_MODELS))
def test_langgraph_agent_writes_a_file_with_tools(name: str, repo: RepoContext, tmp_path: Path) -> None:
    factory, resolver = _provider(name)
    backend = LangGraphBackend(factory, resolver, RepoToolset(repo), tmp_path / "agents.db")
    turns: list[AgentTurn] = []
    prompt = "Use the project__write-file tool to create hello.txt containing exactly: hi. Then reply 'done'."
    backend.run(Node("implement"), prompt, Context({"internal.session_id": "real"}), turns.append)
    backend.close()
    assert (repo.root / "hello.txt").read_text().strip() == "hi"
    assert any("project:hello.txt" in turn.files_written for turn in turns)
    assert all(turn.token_usage.prompt_tokens > 0 for turn in turns)
