"""Prompt layers: the role, persona, personality and task files an agent's prompt is composed from."""

from __future__ import annotations

import enum

from attrs import frozen


class LayerKind(enum.Enum):
    """The four layer kinds, in composition order; the value is the YAML key of a layer file."""

    ROLE = "role"
    PERSONA = "persona"
    PERSONALITY = "personality"
    TASK = "task"

    @property
    def directory(self) -> str:
        """The directory under a prompts/ root holding this kind's files (`roles`, `personas`, ...)."""
        return _DIRECTORIES[self]

    @property
    def text_key(self) -> str:
        """The key holding the layer's text in its file (`system`, `modifiers` or `template`)."""
        return _TEXT_KEYS[self]


_DIRECTORIES = {
    LayerKind.ROLE: "roles",
    LayerKind.PERSONA: "personas",
    LayerKind.PERSONALITY: "personalities",
    LayerKind.TASK: "tasks",
}
_TEXT_KEYS = {
    LayerKind.ROLE: "system",
    LayerKind.PERSONA: "modifiers",
    LayerKind.PERSONALITY: "modifiers",
    LayerKind.TASK: "template",
}


@frozen
class PromptLayer:
    """One loaded layer.

    Attributes:
        kind: Which layer this is.
        name: The layer's name (its file name without `.yaml`).
        text: The role's `system`, the persona's or personality's `modifiers`, or the task's `template`.
        extends: For a persona, the role it extends ("" when none).
        source: Where it came from (a file path, or a description for in-memory layers).
        text_line: The 1-based line of the text's first line in `source` (0 when unknown), so template
            errors can point into the file.
    """

    kind: LayerKind
    name: str
    text: str
    extends: str = ""
    source: str = ""
    text_line: int = 0

    @property
    def label(self) -> str:
        """`task review-pr (prompts/tasks/review-pr.yaml)` for messages."""
        return f"{self.kind.value} {self.name}" + (f" ({self.source})" if self.source else "")
