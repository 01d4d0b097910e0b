"""An in-memory PromptLibrary for tests and embedding."""

from __future__ import annotations

from attrs import evolve

from orchestra_core.model.prompt_layers import LayerKind, PromptLayer


class InMemoryPromptLibrary:
    """Holds layers in a dict; add them with `add` or the kind-specific helpers (which chain)."""

    def __init__(self, layers: list[PromptLayer] | None = None) -> None:
        self._layers: dict[tuple[LayerKind, str], PromptLayer] = {}
        for layer in layers or []:
            self.add(layer)

    def add(self, layer: PromptLayer) -> InMemoryPromptLibrary:
        """Add (or replace) a layer; one without a source is named `memory:<kind dir>/<name>`."""
        if not layer.source:
            layer = evolve(layer, source=f"memory:{layer.kind.directory}/{layer.name}")
        self._layers[(layer.kind, layer.name)] = layer
        return self

    def add_role(self, name: str, system: str) -> InMemoryPromptLibrary:
        return self.add(PromptLayer(LayerKind.ROLE, name, system))

    def add_persona(self, name: str, modifiers: str, extends: str = "") -> InMemoryPromptLibrary:
        return self.add(PromptLayer(LayerKind.PERSONA, name, modifiers, extends))

    def add_personality(self, name: str, modifiers: str) -> InMemoryPromptLibrary:
        return self.add(PromptLayer(LayerKind.PERSONALITY, name, modifiers))

    def add_task(self, name: str, template: str) -> InMemoryPromptLibrary:
        return self.add(PromptLayer(LayerKind.TASK, name, template))

    def find(self, kind: LayerKind, name: str) -> PromptLayer | None:
        return self._layers.get((kind, name))

    def locations(self, kind: LayerKind) -> tuple[str, ...]:
        return (f"memory:{kind.directory}",)
