"""Settings from orchestra.yaml as frozen attrs classes (loading lives in orchestra_adapters.config).

Field names are the YAML keys. Paths are kept as written; `OrchestraSettings.base_dir` is the directory
relative paths are resolved against (the directory of the orchestra.yaml they came from).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from attrs import field, frozen

ALIASES = ("smart", "worker", "cheap")
PUSH_POLICIES = ("never", "on_completion", "on_checkpoint")
ISOLATION_MODES = ("worktree", "in_place")
STORAGE_BACKENDS = ("sqlite", "cxdb")


def _frozen_map(value: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(value or {}))


@frozen
class ProviderSettings:
    """One provider: its alias table (smart/worker/cheap -> model) and connection options."""

    models: Mapping[str, str] = field(factory=dict, converter=_frozen_map)
    api_base: str | None = None
    api_key_env: str | None = None
    max_tokens: int | None = None
    cassette: str | None = None  # scripted provider only: the cassette file, relative to orchestra.yaml


@frozen
class ProvidersSettings:
    """`providers:`: the default provider name and each provider's settings."""

    default: str | None = None
    entries: Mapping[str, ProviderSettings] = field(factory=dict, converter=_frozen_map)


@frozen
class RepoSettings:
    """`workspace.repos.<name>`."""

    path: str
    branch_prefix: str = "orchestra/"
    base_ref: str = "HEAD"
    remote: str | None = None
    push: str | None = None
    clone_depth: int | None = None
    protected_branches: tuple[str, ...] = field(default=("main", "master", "release/*"), converter=tuple)
    isolation: str = "worktree"
    run_hooks: bool = False


@frozen
class ToolCommandSettings:
    """`workspace.tools.<repo>.<tool>`: a shell command offered to agents as a tool."""

    command: str
    description: str = ""
    timeout: float | None = None


@frozen
class WorkspaceSettings:
    """`workspace:`."""

    repos: Mapping[str, RepoSettings] = field(factory=dict, converter=_frozen_map)
    tools: Mapping[str, Mapping[str, ToolCommandSettings]] = field(factory=dict, converter=_frozen_map)


@frozen
class AgentSettings:
    """`agents.<name>`: prompt layers, tools and model choices for nodes that reference the agent."""

    role: str | None = None
    persona: str | None = None
    personality: str | None = None
    task: str | None = None
    tools: tuple[str, ...] = field(default=(), converter=tuple)
    disallowed_tools: tuple[str, ...] = field(default=(), converter=tuple)
    model: str | None = None
    provider: str | None = None
    mode: str | None = None


@frozen
class StorageSettings:
    """`storage:`: sqlite (default, `path`) or cxdb (`addr` host:port for writes, `url` for HTTP reads)."""

    backend: str = "sqlite"
    path: str | None = None
    url: str | None = None
    addr: str | None = None


@frozen
class OrchestraSettings:
    """A whole orchestra.yaml."""

    providers: ProvidersSettings = field(factory=ProvidersSettings)
    backend: str | None = None
    workspace: WorkspaceSettings = field(factory=WorkspaceSettings)
    agents: Mapping[str, AgentSettings] = field(factory=dict, converter=_frozen_map)
    storage: StorageSettings = field(factory=StorageSettings)
    prompts: tuple[str, ...] = field(default=(), converter=tuple)
    source_path: Path | None = None

    @property
    def base_dir(self) -> Path:
        """Where relative paths in this file are resolved from."""
        return self.source_path.parent if self.source_path else Path.cwd()
