"""ArtifactStore port: named storage for large stage outputs that do not belong in the context (5.5)."""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from attrs import frozen

from orchestra_core.model.errors import OrchestraError

FILE_BACKING_THRESHOLD = 100 * 1024
"""Artifacts whose JSON form is larger than this many bytes are kept on disk when the store can."""


ARTIFACT_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")


def check_artifact(artifact_id: str, data: Any) -> int:
    """Validate an artifact id and data; return the size of the data's JSON form in bytes.

    Raises:
        ValueError: The id is not allowed or the data is not JSON-serializable.
    """
    if not ARTIFACT_ID_RE.fullmatch(artifact_id) or ".." in artifact_id:
        raise ValueError(f"artifact id {artifact_id!r} must be letters, digits, '.', '_' or '-'")
    try:
        return len(json.dumps(data, ensure_ascii=False).encode("utf-8"))
    except (TypeError, ValueError) as error:
        raise ValueError(f"artifact {artifact_id!r} is not JSON-serializable: {error}") from None


class ArtifactNotFoundError(OrchestraError, KeyError):
    """No artifact has the requested id."""

    def __init__(self, artifact_id: str) -> None:
        self.artifact_id = artifact_id
        super().__init__(f"artifact not found: {artifact_id!r}")

    def __str__(self) -> str:
        return f"artifact not found: {self.artifact_id!r}"


@frozen
class ArtifactInfo:
    """What the store knows about an artifact."""

    id: str
    name: str
    size_bytes: int
    stored_at: datetime
    is_file_backed: bool


@runtime_checkable
class ArtifactStore(Protocol):
    """Stores JSON-serializable values by id; large ones may live in files."""

    def store(self, artifact_id: str, name: str, data: Any) -> ArtifactInfo:
        """Store (or replace) an artifact.

        Args:
            artifact_id: Unique id; letters, digits, `.`, `_` and `-` only (it may become a file name).
            name: A human-readable name.
            data: A JSON-serializable value.

        Raises:
            ValueError: The id is not allowed or the data is not JSON-serializable.
        """
        ...

    def retrieve(self, artifact_id: str) -> Any:
        """The stored value.

        Raises:
            ArtifactNotFoundError: No such artifact.
        """
        ...

    def has(self, artifact_id: str) -> bool:
        """Whether an artifact with this id exists."""
        ...

    def list(self) -> list[ArtifactInfo]:
        """Every artifact, in the order they were first stored."""
        ...

    def remove(self, artifact_id: str) -> None:
        """Remove an artifact (no error when absent)."""
        ...

    def clear(self) -> None:
        """Remove every artifact."""
        ...
