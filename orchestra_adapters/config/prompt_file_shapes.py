"""The shapes of prompt layer files (`role: {name, system}`, `task: {name, template}`, ...), for structuring;
imported when a layer file is read, not by every run."""

from __future__ import annotations

from attrs import frozen

from orchestra_core.model.prompt_layers import LayerKind


@frozen
class _RoleBody:
    system: str
    name: str | None = None


@frozen
class _PersonaBody:
    modifiers: str
    name: str | None = None
    extends: str | None = None


@frozen
class _PersonalityBody:
    modifiers: str
    name: str | None = None


@frozen
class _TaskBody:
    template: str
    name: str | None = None


@frozen
class _RoleFile:
    role: _RoleBody


@frozen
class _PersonaFile:
    persona: _PersonaBody


@frozen
class _PersonalityFile:
    personality: _PersonalityBody


@frozen
class _TaskFile:
    task: _TaskBody


FILE_SHAPES: dict[LayerKind, type] = {
    LayerKind.ROLE: _RoleFile,
    LayerKind.PERSONA: _PersonaFile,
    LayerKind.PERSONALITY: _PersonalityFile,
    LayerKind.TASK: _TaskFile,
}
