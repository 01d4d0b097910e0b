"""Agent tools as the LLM layer sees them, their provider-safe names, and write tracking."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping, Sequence
from operator import attrgetter
from typing import Any, TypeGuard

from attrs import Factory, field, frozen

from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.immutable import frozen_map, str_tuple
from orchestra_core.model.turn import FileVersion

_SAFE_RE = re.compile(r"[^A-Za-z0-9_-]")
_FAILURE_PREFIX = "Error: "



def provider_safe_name(name: str) -> str:
    """Map an Orchestra tool name (`backend:run-tests`) to one model providers accept (`backend__run-tests`).

    Providers allow `[A-Za-z0-9_-]{1,64}`; `:` becomes `__`, anything else becomes `_`.
    """
    return _SAFE_RE.sub("_", name.replace(":", "__"))[:64]


@frozen
class AgentTool:
    """A tool an agent may call.

    Attributes:
        name: Orchestra name, `repo:tool` for repo-scoped tools or a plain name for cross-repo tools.
        description: What the tool does, shown to the model.
        func: Called with the model's arguments; returns the text the model sees.
        writes_files: Whether the tool can modify files (so its writes are tracked and committed).
        source: The typed function whose parameters, apart from `injected`, are the tool's arguments:
            adapters build the schema offered to the model (and check the model's arguments) from its
            annotations, defaults and Google-style `Args:` docstring. Defaults to `func`.
        injected: Parameters of `source` that Orchestra fills in (`repo`, `repos`, `tracker`), not the model.
    """

    name: str
    description: str
    func: Callable[..., str] = field(eq=False)
    writes_files: bool = False
    source: Callable[..., Any] = field(eq=False, default=Factory(attrgetter("func"), takes_self=True))
    injected: tuple[str, ...] = field(default=(), converter=str_tuple)

    @property
    def safe_name(self) -> str:
        return provider_safe_name(self.name)


class ToolFailure(str):
    """A tool's failure as the text the model sees (`Error: ...`); being a str subclass, it still tells
    the backend that the call failed (for ToolCall.error)."""

    __slots__ = ()

    @classmethod
    def of(cls, message: str) -> ToolFailure:
        return cls(f"{_FAILURE_PREFIX}{message}")

    @property
    def message(self) -> str:
        """The failure without the `Error: ` prefix (for ToolCall.error)."""
        return self.removeprefix(_FAILURE_PREFIX)


def is_tool_error(result: str) -> TypeGuard[ToolFailure]:
    """Whether a tool's result reports a failure (for recording ToolCall.error)."""
    return isinstance(result, ToolFailure)


def index_by_safe_name(tools: Sequence[AgentTool]) -> dict[str, AgentTool]:
    """Map provider-safe names back to tools, for dispatching the model's tool calls.

    Raises:
        OrchestraError: Two tools map to the same provider-safe name (rename one of them).
    """
    index: dict[str, AgentTool] = {}
    for tool in tools:
        other = index.setdefault(tool.safe_name, tool)
        if other is not tool:
            raise OrchestraError(f"tools {other.name!r} and {tool.name!r} share the provider name {tool.safe_name!r}")
    return index


@frozen
class TurnWrites:
    """The files tools wrote, as `repo:path` in first-write order, with the content each had when last written
    where the tracker captured it (by `repo:path`)."""

    files: tuple[str, ...] = ()
    versions: Mapping[str, FileVersion] = field(factory=dict, converter=frozen_map)

    def __add__(self, later: TurnWrites) -> TurnWrites:
        files = tuple(dict.fromkeys([*self.files, *later.files]))
        versions = {**self.versions, **later.versions}
        for entry in later.files:  # written again but not captured: read when committed, not the older capture
            if entry not in later.versions:
                versions.pop(entry, None)
        return TurnWrites(files, versions)


# Captures a file's content right after a tool wrote it: (repo, repo-relative path) -> its version, or None
# when it cannot (the commit then reads the file as it is when it is made).
WriteCapture = Callable[[str, str], FileVersion | None]


class WriteTracker:
    """Collects the files tools modified during one agent turn, as `repo:path`, in first-write order.

    With a `capture`, each write's content is stored as it is when the tool records it, so the turn's commit
    holds what the turn wrote even if the agent changed the file again before the commit was made (a CLI agent
    goes on while Orchestra commits). A capture that fails leaves the file to be read at commit time.
    """

    def __init__(self, capture: WriteCapture | None = None) -> None:
        self._writes: list[str] = []
        self._versions: dict[str, FileVersion] = {}
        self._capture = capture
        self._lock = threading.Lock()

    def record(self, repo: str, path: str) -> None:
        """Called by write tools after modifying `path` (repo-relative) in `repo`."""
        entry = f"{repo}:{path}"
        version = self._captured(repo, path)
        with self._lock:
            if entry not in self._writes:
                self._writes.append(entry)
            if version is not None:
                self._versions[entry] = version
            else:
                self._versions.pop(entry, None)

    def pending(self) -> list[str]:
        """The writes recorded since the last flush, without starting over."""
        with self._lock:
            return list(self._writes)

    def flush(self) -> list[str]:
        """Return the writes so far and start over for the next turn."""
        return list(self.flush_writes().files)

    def flush_writes(self) -> TurnWrites:
        """The writes so far with their captured versions; starts over for the next turn."""
        with self._lock:
            writes = TurnWrites(tuple(self._writes), self._versions)
            self._writes, self._versions = [], {}
            return writes

    def _captured(self, repo: str, path: str) -> FileVersion | None:
        if self._capture is None:
            return None
        try:
            return self._capture(repo, path)
        except Exception:  # the commit reads the file instead: as exact as without a capture
            return None
