"""The PromptLibrary contract run against the in-memory fake and the YAML-file adapter."""

from __future__ import annotations

from ruamel.yaml import YAML
from ruamel.yaml.scalarstring import LiteralScalarString

from orchestra_adapters.config.prompt_files import YamlPromptLibrary
from orchestra_core.model.prompt_layers import PromptLayer
from orchestra_core.testing.contracts.prompt_library import PromptLibraryContract
from orchestra_core.testing.prompt_library import InMemoryPromptLibrary


class TestInMemoryPromptLibrary(PromptLibraryContract):
    def make_library(self, layers: list[PromptLayer]) -> InMemoryPromptLibrary:
        return InMemoryPromptLibrary(layers)


class TestYamlPromptLibrary(PromptLibraryContract):
    def make_library(self, layers: list[PromptLayer]) -> YamlPromptLibrary:
        root = self.tmp / "prompts"
        for layer in layers:
            body = {"name": layer.name, layer.kind.text_key: LiteralScalarString(layer.text)}
            if layer.extends:
                body["extends"] = layer.extends
            path = root / layer.kind.directory / f"{layer.name}.yaml"
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("w", encoding="utf-8") as handle:
                YAML().dump({layer.kind.value: body}, handle)
        return YamlPromptLibrary([root])
