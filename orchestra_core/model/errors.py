"""Error types shared across Orchestra; every error a user can cause derives from OrchestraError."""

from __future__ import annotations


class OrchestraError(Exception):
    """Base of every error Orchestra raises on purpose (bad input, failed checks, store problems)."""


class PipelineLoadError(OrchestraError):
    """A pipeline file cannot be read or is not valid DOT of the supported subset.

    Attributes:
        path: The file that failed (or None for text given directly).
        line: 1-based line of the problem, when known.
        detail: The problem without the location prefix.
    """

    def __init__(self, detail: str, *, path: str | None = None, line: int | None = None) -> None:
        self.path = path
        self.line = line
        self.detail = detail
        super().__init__(self._format())

    def _format(self) -> str:
        where = self.path or "<string>"
        if self.line is not None:
            where = f"{where}:{self.line}"
        return f"{where}: {self.detail}"


class AttributeValueError(OrchestraError):
    """A typed attribute (integer, boolean, duration, ...) holds a value of the wrong form."""

    def __init__(self, owner: str, key: str, value: str, expected: str) -> None:
        self.owner = owner
        self.key = key
        self.value = value
        self.expected = expected
        super().__init__(f"{owner}: attribute {key}={value!r} is not {expected}")
