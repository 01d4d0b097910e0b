"""AgentResolver: agent references, node overrides, model precedence with the stylesheet, tools, mode."""

from __future__ import annotations

import pytest

from orchestra_core.agents.resolver import AgentConfigError, AgentResolver
from orchestra_core.agents.toolset import create_registry
from orchestra_core.model.context import Context
from orchestra_core.model.graph import Graph, Node
from orchestra_core.model.settings import (
    AgentSettings,
    OrchestraSettings,
    ProviderSettings,
    ProvidersSettings,
)
from orchestra_core.testing.prompt_library import InMemoryPromptLibrary

PROVIDERS = ProvidersSettings(
    default="anthropic",
    entries={
        "anthropic": ProviderSettings(models={"smart": "opus", "worker": "sonnet", "cheap": "haiku"}),
        "openai": ProviderSettings(models={"smart": "gpt-4o", "worker": "gpt-4o-mini", "cheap": "gpt-4o-mini"}),
    },
)
AGENTS = {
    "reviewer": AgentSettings(
        role="engineer", persona="senior", personality="terse", task="review", model="smart", tools=["project:list-files"]
    ),
    "readonly": AgentSettings(role="engineer", disallowed_tools=["*:write-file", "*:edit-file"], mode="interactive"),
    "openai-agent": AgentSettings(provider="openai"),
}


@pytest.fixture
def resolver() -> AgentResolver:
    library = (
        InMemoryPromptLibrary()
        .add_role("engineer", "You are an engineer.")
        .add_persona("senior", "Senior.", extends="engineer")
        .add_personality("terse", "Terse.")
        .add_personality("chatty", "Chatty.")
        .add_task("review", "Review {{ pr_diff }}.")
    )
    settings = OrchestraSettings(providers=PROVIDERS, agents=AGENTS)
    return AgentResolver(settings, library, create_registry(settings))


def test_agent_reference_supplies_layers_model_and_tools(resolver: AgentResolver) -> None:
    node = Node("review", {"agent": "reviewer"})
    agent = resolver.resolve(node, Context({"pr_diff": "DIFF"}))
    assert agent.agent_name == "reviewer"
    assert agent.prompt == "You are an engineer.\n\nSenior.\n\nTerse.\n\nReview DIFF."
    assert (agent.provider, agent.model, agent.mode) == ("anthropic", "opus", "autonomous")
    assert agent.tool_names == (
        "project:read-file", "project:write-file", "project:edit-file", "project:search-code", "project:list-files",
    )


def test_node_attributes_override_agent_layers_one_by_one(resolver: AgentResolver) -> None:
    node = Node("review", {"agent": "reviewer", "agent.personality": "chatty", "prompt": "Be quick."})
    agent = resolver.resolve(node, Context({"pr_diff": "D"}))
    assert agent.prompt == "You are an engineer.\n\nSenior.\n\nChatty.\n\nReview D.\n\nBe quick."


def test_inline_layers_without_an_agent(resolver: AgentResolver) -> None:
    node = Node("fix", {"agent.persona": "senior", "agent.task": "review"})
    agent = resolver.resolve(node, Context({"pr_diff": "X"}))
    assert agent.agent_name == ""
    assert agent.system_prompt == "You are an engineer.\n\nSenior."
    assert [label.split(" (")[0] for label in agent.layers] == ["role engineer", "persona senior", "task review"]


def test_plain_node_falls_back_to_prompt_then_label(resolver: AgentResolver) -> None:
    assert resolver.resolve(Node("a", {"prompt": "Do $goal"}), Context()).prompt == "Do $goal"
    assert resolver.resolve(Node("a", {"label": "Write the code"}), Context()).prompt == "Write the code"


def test_preamble_comes_last(resolver: AgentResolver) -> None:
    agent = resolver.resolve(Node("a", {"prompt": "Go."}), Context(), preamble="Earlier: planned.")
    assert agent.prompt == "Go.\n\nEarlier: planned."
    assert agent.task_prompt == "Go."


def test_unknown_agent_suggests_the_close_one(resolver: AgentResolver) -> None:
    with pytest.raises(AgentConfigError, match=r"node r: no agent named 'reviewr' in orchestra.yaml \(did you mean reviewer\?\)"):
        resolver.resolve(Node("r", {"agent": "reviewr"}), Context())


def test_errors_name_the_node(resolver: AgentResolver) -> None:
    with pytest.raises(AgentConfigError, match=r"^node r: task review .*'pr_diff' is undefined"):
        resolver.resolve(Node("r", {"agent": "reviewer"}), Context())


def test_stylesheet_value_on_the_node_outranks_the_agent(resolver: AgentResolver) -> None:
    node = Node("review", {"agent": "reviewer", "llm_model": "worker", "llm_provider": "openai"})
    agent = resolver.resolve(node, Context({"pr_diff": ""}))
    assert (agent.provider, agent.model) == ("openai", "gpt-4o-mini")


def test_agent_model_outranks_the_graph_default(resolver: AgentResolver) -> None:
    graph = Graph("g", {"llm_model": "cheap"})
    reviewer = resolver.resolve(Node("review", {"agent": "reviewer"}), Context({"pr_diff": ""}), graph)
    plain = resolver.resolve(Node("other", {"prompt": "x"}), Context(), graph)
    assert reviewer.model == "opus"
    assert plain.model == "haiku"


def test_graph_default_from_the_context_mirror(resolver: AgentResolver) -> None:
    agent = resolver.resolve(Node("a", {"prompt": "x"}), Context({"graph.llm_provider": "openai", "graph.llm_model": "smart"}))
    assert (agent.provider, agent.model) == ("openai", "gpt-4o")


def test_agent_provider_with_default_worker_tier(resolver: AgentResolver) -> None:
    agent = resolver.resolve(Node("a", {"agent": "openai-agent", "prompt": "x"}), Context())
    assert (agent.provider, agent.model, agent.model_choice.provider_source) == ("openai", "gpt-4o-mini", "agent")


def test_restrictions_and_mode_from_the_agent(resolver: AgentResolver) -> None:
    agent = resolver.resolve(Node("a", {"agent": "readonly", "prompt": "x"}), Context())
    assert agent.tool_names == ("project:read-file", "project:search-code", "project:list-files")
    assert agent.mode == "interactive"


def test_node_tool_attributes_override_the_agents(resolver: AgentResolver) -> None:
    node = Node("a", {"agent": "readonly", "prompt": "x", "agent.disallowed_tools": "project:search-code", "agent.mode": "autonomous"})
    agent = resolver.resolve(node, Context())
    assert "project:write-file" in agent.tool_names
    assert "project:search-code" not in agent.tool_names
    assert agent.mode == "autonomous"


def test_unknown_tool_is_an_error_naming_the_node(resolver: AgentResolver) -> None:
    with pytest.raises(AgentConfigError, match=r"node a: unknown tool\(s\): backend:run-tests"):
        resolver.resolve(Node("a", {"prompt": "x", "agent.tools": "backend:run-tests"}), Context())


def test_bad_mode_is_an_error(resolver: AgentResolver) -> None:
    with pytest.raises(AgentConfigError, match=r"agent\.mode must be one of autonomous, interactive"):
        resolver.resolve(Node("a", {"prompt": "x", "agent.mode": "chat"}), Context())
