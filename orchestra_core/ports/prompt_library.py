"""PromptLibrary port: where prompt layers (roles, personas, personalities, tasks) come from."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from orchestra_core.model.prompt_layers import LayerKind, PromptLayer


@runtime_checkable
class PromptLibrary(Protocol):
    """Finds prompt layers by kind and name."""

    def find(self, kind: LayerKind, name: str) -> PromptLayer | None:
        """The layer named `name` of this kind, or None when no location has it.

        Raises:
            ConfigError: The layer exists but is malformed (the message names the file and line).
        """
        ...

    def locations(self, kind: LayerKind) -> tuple[str, ...]:
        """Where layers of this kind are looked for, in search order (for "not found" messages)."""
        ...
