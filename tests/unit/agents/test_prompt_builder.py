"""AgentPromptBuilder: the engine's PromptBuilder gets the composed prompt with the stage's preamble last."""

from __future__ import annotations

from typing import Any

import pytest

from orchestra_core.agents.prompt_builder import AgentPromptBuilder
from orchestra_core.agents.resolver import AgentConfigError, AgentResolver
from orchestra_core.agents.toolset import create_registry
from orchestra_core.engine.stage import StageRun
from orchestra_core.handlers.codergen import PromptBuilder, stage_preamble
from orchestra_core.model.context import Context
from orchestra_core.model.graph import Graph, Node
from orchestra_core.model.outcome import Outcome
from orchestra_core.model.settings import (
    AgentSettings,
    OrchestraSettings,
    ProviderSettings,
    ProvidersSettings,
)
from orchestra_core.testing.prompt_library import InMemoryPromptLibrary


def stage(fidelity: str, completed: tuple[str, ...] = (), outcomes: dict[str, Outcome] | None = None) -> StageRun:
    unused: Any = None
    return StageRun(
        session_id="s-1",
        logs_root="/tmp/run",
        stage_key="review",
        attempt=1,
        max_attempts=1,
        incoming_edge=None,
        previous_node=completed[-1] if completed else None,
        fidelity=fidelity,
        thread_key="review",
        resumed=False,
        timeout=None,
        branch=None,
        directory=unused,
        engine=unused,
        completed_nodes=completed,
        node_outcomes=outcomes or {},
        emit_event=unused,
    )


@pytest.fixture
def builder() -> AgentPromptBuilder:
    settings = OrchestraSettings(
        providers=ProvidersSettings(default="anthropic", entries={"anthropic": ProviderSettings(models={"worker": "sonnet"})}),
        agents={"reviewer": AgentSettings(role="engineer", task="review")},
    )
    library = InMemoryPromptLibrary().add_role("engineer", "You are an engineer.").add_task("review", "Review {{ pr_diff }}.")
    return AgentPromptBuilder(AgentResolver(settings, library, create_registry(settings)))


GRAPH = Graph("g", {"goal": "Ship the fix"})


def test_is_the_engines_prompt_builder(builder: AgentPromptBuilder) -> None:
    assert isinstance(builder, PromptBuilder)


def test_full_fidelity_has_no_preamble(builder: AgentPromptBuilder) -> None:
    prompt = builder.build(Node("review", {"agent": "reviewer"}), Context({"pr_diff": "D"}), GRAPH, stage("full"))
    assert prompt == "You are an engineer.\n\nReview D."


def test_preamble_follows_the_layers_and_node_prompt(builder: AgentPromptBuilder) -> None:
    context = Context({"pr_diff": "D"})
    run = stage("compact", ("plan",), {"plan": Outcome.success("planned")})
    node = Node("review", {"agent": "reviewer", "prompt": "Be brief."})
    preamble = stage_preamble(context, GRAPH, run)
    assert preamble.startswith("## Context from earlier stages")
    assert "plan" in preamble
    assert builder.build(node, context, GRAPH, run) == f"You are an engineer.\n\nReview D.\n\nBe brief.\n\n{preamble}"


def test_resolution_errors_name_the_node(builder: AgentPromptBuilder) -> None:
    with pytest.raises(AgentConfigError, match=r"node review: task review .*'pr_diff' is undefined"):
        builder.build(Node("review", {"agent": "reviewer"}), Context(), GRAPH, stage("full"))
