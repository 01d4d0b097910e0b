"""Prompt layer files (`prompts/roles/<name>.yaml`, ...) found through the discovery chain."""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from orchestra_adapters.config.orchestra_yaml import global_config_dir
from orchestra_core.model.prompt_layers import LayerKind, PromptLayer
from orchestra_core.model.settings import ConfigError, OrchestraSettings

_LAYER_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
EXTENSIONS = (".yaml", ".yml")


class YamlPromptLibrary:
    """Layers from YAML files under prompts/ roots; the first root holding the file wins.

    Each root is a directory with `roles/`, `personas/`, `personalities/` and `tasks/` inside. Parsed
    files are cached for the library's lifetime.
    """

    def __init__(self, roots: Sequence[Path]) -> None:
        unique: list[Path] = []
        for root in roots:
            resolved = Path(root).expanduser().resolve()
            if resolved not in unique:
                unique.append(resolved)
        self.roots: tuple[Path, ...] = tuple(unique)
        self._cache: dict[Path, PromptLayer] = {}
        self._lock = threading.Lock()

    def find(self, kind: LayerKind, name: str) -> PromptLayer | None:
        if not _LAYER_NAME_RE.match(name):
            raise ConfigError.at(
                f"{kind.value} name {name!r} is not a layer file name (letters, digits, '.', '_', '-')"
            )
        for root in self.roots:
            for extension in EXTENSIONS:
                candidate = root / kind.directory / f"{name}{extension}"
                if candidate.is_file():
                    return self._load(kind, name, candidate)
        return None

    def locations(self, kind: LayerKind) -> tuple[str, ...]:
        return tuple(str(root / kind.directory) for root in self.roots)

    def _load(self, kind: LayerKind, name: str, path: Path) -> PromptLayer:
        with self._lock:
            cached = self._cache.get(path)
        if cached is not None:
            return cached
        layer = load_layer_file(kind, name, path)
        with self._lock:
            self._cache[path] = layer
        return layer


def load_layer_file(kind: LayerKind, name: str, path: Path) -> PromptLayer:
    """Parse one layer file, shaped as in the seed (`role: {name, system}`, `task: {name, template}`, ...).

    Raises:
        ConfigError: The file is not valid YAML or not shaped like a `kind` layer (file, line, key).
    """
    from orchestra_adapters.config.prompt_file_shapes import FILE_SHAPES
    from orchestra_adapters.config.structuring import structure_yaml
    from orchestra_adapters.config.yaml_source import read_yaml

    source = read_yaml(path)
    if not isinstance(source.data, dict):
        raise ConfigError.at(f"expected a mapping with a {kind.value}: key", file=source.file, line=1)
    body = getattr(structure_yaml(source, FILE_SHAPES[kind]), kind.value)
    if body.name is not None and body.name != name:
        raise ConfigError.at(
            f"name is {body.name!r} but the file is {path.name}; they must match",
            file=source.file,
            line=source.line_of((kind.value, "name")),
            key=f"{kind.value}.name",
        )
    return PromptLayer(
        kind=kind,
        name=name,
        text=getattr(body, kind.text_key),
        extends=getattr(body, "extends", None) or "",
        source=source.file,
        text_line=_text_line(source, kind),
    )


def prompt_roots(settings: OrchestraSettings, pipeline_path: Path | None) -> list[Path]:
    """The prompts/ roots in search order: next to the pipeline, the `prompts` paths, `~/.orchestra/prompts`."""
    roots = [pipeline_path.resolve().parent / "prompts"] if pipeline_path is not None else []
    return [*roots, *settings.prompt_dirs(), global_config_dir() / "prompts"]


def prompt_library_for(settings: OrchestraSettings, pipeline_path: Path | None) -> YamlPromptLibrary:
    """The prompt library a run or compile of `pipeline_path` uses."""
    return YamlPromptLibrary(prompt_roots(settings, pipeline_path))


def _text_line(source: Any, kind: LayerKind) -> int:
    return source.value_line((kind.value, kind.text_key)) or 0
