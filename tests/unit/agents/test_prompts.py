"""Prompt composition: layer order, persona extends role, overrides, missing layers, label fallback."""

from __future__ import annotations

import pytest

from orchestra_core.agents.prompts import LayerChoice, PromptLayerError, compose, load_layers
from orchestra_core.agents.templates import template_variables
from orchestra_core.model.prompt_layers import LayerKind
from orchestra_core.testing.prompt_library import InMemoryPromptLibrary


@pytest.fixture
def library() -> InMemoryPromptLibrary:
    return (
        InMemoryPromptLibrary()
        .add_role("engineer", "ROLE engineer\n")
        .add_role("architect", "ROLE architect\n")
        .add_persona("senior", "PERSONA senior\n", extends="engineer")
        .add_persona("principal", "PERSONA principal\n", extends="architect")
        .add_persona("free", "PERSONA free\n")
        .add_personality("terse", "PERSONALITY terse\n")
        .add_task("fix", "TASK fix {{ bug }}\n")
    )


def test_layers_compose_in_order_with_node_prompt_and_preamble(library: InMemoryPromptLibrary) -> None:
    layers = load_layers(library, LayerChoice("engineer", "senior", "terse", "fix"), "node n")
    composed = compose(layers, template_variables({"bug": "#12"}), "Also add a test.", "Context so far: planned.")
    assert composed.system_prompt == "ROLE engineer\n\nPERSONA senior\n\nPERSONALITY terse"
    assert composed.task_prompt == "TASK fix #12\n\nAlso add a test."
    assert composed.prompt == (
        "ROLE engineer\n\nPERSONA senior\n\nPERSONALITY terse\n\nTASK fix #12\n\nAlso add a test.\n\nContext so far: planned."
    )


def test_persona_brings_the_role_it_extends(library: InMemoryPromptLibrary) -> None:
    layers = load_layers(library, LayerChoice(persona="senior"), "node n")
    assert [layer.name for layer in layers.used()] == ["engineer", "senior"]


def test_node_persona_replaces_the_agents_role(library: InMemoryPromptLibrary) -> None:
    choice = LayerChoice(role="engineer", persona="principal", persona_from_node=True)
    assert load_layers(library, choice, "node n").role.name == "architect"


def test_explicit_role_conflicting_with_the_persona_is_an_error(library: InMemoryPromptLibrary) -> None:
    choice = LayerChoice(role="architect", persona="senior", role_from_node=True, persona_from_node=True)
    with pytest.raises(PromptLayerError, match="persona 'senior' extends role 'engineer', but role 'architect'"):
        load_layers(library, choice, "node n")


def test_agent_role_conflicting_with_agent_persona_is_an_error(library: InMemoryPromptLibrary) -> None:
    with pytest.raises(PromptLayerError):
        load_layers(library, LayerChoice(role="architect", persona="senior"), "node n")


def test_persona_without_extends_goes_with_any_role(library: InMemoryPromptLibrary) -> None:
    layers = load_layers(library, LayerChoice(role="architect", persona="free"), "node n")
    assert [layer.name for layer in layers.used()] == ["architect", "free"]


@pytest.mark.parametrize("kind", list(LayerKind))
def test_missing_layer_names_kind_name_and_where_it_looked(library: InMemoryPromptLibrary, kind: LayerKind) -> None:
    choice = LayerChoice(**{kind.value: "ghost"})
    with pytest.raises(PromptLayerError) as caught:
        load_layers(library, choice, "node review")
    assert str(caught.value) == (
        f"node review: no {kind.value} named 'ghost' (looked for ghost.yaml in: memory:{kind.directory})"
    )


def test_missing_extended_role_is_reported(library: InMemoryPromptLibrary) -> None:
    library.add_persona("orphan", "x", extends="nobody")
    with pytest.raises(PromptLayerError, match="no role named 'nobody'"):
        load_layers(library, LayerChoice(persona="orphan"), "node n")


def test_no_layers_is_just_the_node_prompt(library: InMemoryPromptLibrary) -> None:
    composed = compose(load_layers(library, LayerChoice(), "node n"), {}, "Write hello.py")
    assert (composed.system_prompt, composed.prompt) == ("", "Write hello.py")
