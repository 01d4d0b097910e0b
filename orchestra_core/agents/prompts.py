"""Prompt composition: role + persona + personality + task (rendered), then the node's prompt and preamble."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from attrs import frozen

from orchestra_core.agents.templates import render_task
from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.prompt_layers import LayerKind, PromptLayer
from orchestra_core.ports.prompt_library import PromptLibrary


class PromptLayerError(OrchestraError):
    """A named prompt layer does not exist, or a persona extends a different role than the one chosen."""


@frozen
class LayerChoice:
    """The layer names chosen for a node (node attributes over the agent's settings, one by one).

    `role_from_node` / `persona_from_node` say whether the node itself named the role or persona: a
    persona the node names brings the role it extends, overriding a role that came from the agent.
    """

    role: str = ""
    persona: str = ""
    personality: str = ""
    task: str = ""
    role_from_node: bool = False
    persona_from_node: bool = False

    @property
    def is_empty(self) -> bool:
        return not (self.role or self.persona or self.personality or self.task)


@frozen
class PromptLayers:
    """The loaded layers of one node (None where no layer of that kind applies)."""

    role: PromptLayer | None = None
    persona: PromptLayer | None = None
    personality: PromptLayer | None = None
    task: PromptLayer | None = None

    def used(self) -> tuple[PromptLayer, ...]:
        """The layers present, in composition order."""
        return tuple(layer for layer in (self.role, self.persona, self.personality, self.task) if layer)


@frozen
class ComposedPrompt:
    """A node's prompt in its parts.

    Attributes:
        system_prompt: role, persona and personality texts.
        task_prompt: the rendered task template and the node's own prompt.
        prompt: everything, in order, followed by the preamble: what the backend receives.
    """

    system_prompt: str
    task_prompt: str
    prompt: str


def load_layers(library: PromptLibrary, choice: LayerChoice, owner: str) -> PromptLayers:
    """Load the chosen layers; a persona's `extends` supplies the role when none is chosen.

    Args:
        library: Where layers come from.
        choice: The layer names.
        owner: Who asks (`node review`), for messages.

    Raises:
        PromptLayerError: A layer is missing, or the chosen role differs from the one the persona extends.
        ConfigError: A layer file is malformed.
    """
    persona = _find(library, LayerKind.PERSONA, choice.persona, owner)
    role_name = _role_name(choice, persona, owner)
    return PromptLayers(
        role=_find(library, LayerKind.ROLE, role_name, owner),
        persona=persona,
        personality=_find(library, LayerKind.PERSONALITY, choice.personality, owner),
        task=_find(library, LayerKind.TASK, choice.task, owner),
    )


def compose(layers: PromptLayers, variables: Mapping[str, Any], node_prompt: str, preamble: str = "") -> ComposedPrompt:
    """Join the layers (blank line between parts); the task template is rendered with `variables`.

    Raises:
        PromptTemplateError: The task template cannot be rendered (e.g. an undefined variable).
        ConfigError: The task template has a syntax error.
    """
    system = _join(layer.text for layer in (layers.role, layers.persona, layers.personality) if layer)
    rendered_task = render_task(layers.task, variables) if layers.task else ""
    task = _join([rendered_task, node_prompt])
    return ComposedPrompt(system_prompt=system, task_prompt=task, prompt=_join([system, task, preamble]))


def _role_name(choice: LayerChoice, persona: PromptLayer | None, owner: str) -> str:
    extends = persona.extends if persona else ""
    if persona is None or not extends or choice.role == extends:
        return choice.role
    if not choice.role or (choice.persona_from_node and not choice.role_from_node):
        return extends
    raise PromptLayerError(
        f"{owner}: persona {persona.name!r} extends role {extends!r}, but role {choice.role!r} is chosen; "
        f"name role {extends!r}, or a persona that extends {choice.role!r}"
    )


def _find(library: PromptLibrary, kind: LayerKind, name: str, owner: str) -> PromptLayer | None:
    if not name:
        return None
    layer = library.find(kind, name)
    if layer is None:
        looked = ", ".join(library.locations(kind)) or "nowhere"
        raise PromptLayerError(f"{owner}: no {kind.value} named {name!r} (looked for {name}.yaml in: {looked})")
    return layer


def _join(parts: Any) -> str:
    return "\n\n".join(text.strip() for text in parts if text and text.strip())
