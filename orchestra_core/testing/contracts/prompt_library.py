"""The PromptLibrary contract: layers found by kind and name, kinds kept apart, locations named."""

from __future__ import annotations

from orchestra_core.model.prompt_layers import LayerKind, PromptLayer
from orchestra_core.ports.prompt_library import PromptLibrary
from orchestra_core.testing.contracts._base import PortContract


class PromptLibraryContract(PortContract):
    """A runner implements `make_library(layers)`: a library holding exactly these layers."""

    def make_library(self, layers: list[PromptLayer]) -> PromptLibrary:
        """A library with exactly `layers` (write them under `self.tmp` for a file-based one)."""
        raise NotImplementedError

    def _find(self, library: PromptLibrary, kind: LayerKind, name: str) -> PromptLayer:
        found = library.find(kind, name)
        assert found is not None, f"{kind.value} {name!r} not found"
        return found

    def test_is_a_prompt_library(self) -> None:
        assert isinstance(self.make_library([]), PromptLibrary)

    def test_finds_each_kind_by_name(self) -> None:
        layers = [
            PromptLayer(LayerKind.ROLE, "engineer", "You are an engineer.\n"),
            PromptLayer(LayerKind.PERSONA, "senior", "Seasoned.\n", extends="engineer"),
            PromptLayer(LayerKind.PERSONALITY, "terse", "Be terse.\n"),
            PromptLayer(LayerKind.TASK, "fix", "Fix {{ bug }}.\n"),
        ]
        library = self.make_library(layers)
        for expected in layers:
            found = self._find(library, expected.kind, expected.name)
            assert (found.kind, found.name, found.text, found.extends) == (
                expected.kind,
                expected.name,
                expected.text,
                expected.extends,
            )
            assert found.source

    def test_missing_layers_are_none(self) -> None:
        library = self.make_library([PromptLayer(LayerKind.ROLE, "engineer", "x")])
        assert library.find(LayerKind.ROLE, "architect") is None
        assert library.find(LayerKind.PERSONA, "engineer") is None

    def test_kinds_are_separate_namespaces(self) -> None:
        library = self.make_library(
            [
                PromptLayer(LayerKind.ROLE, "same", "role text"),
                PromptLayer(LayerKind.TASK, "same", "task text"),
            ]
        )
        assert self._find(library, LayerKind.ROLE, "same").text == "role text"
        assert self._find(library, LayerKind.TASK, "same").text == "task text"

    def test_locations_name_where_it_looks(self) -> None:
        library = self.make_library([])
        for kind in LayerKind:
            locations = library.locations(kind)
            assert locations
            assert all(kind.directory in location for location in locations)
