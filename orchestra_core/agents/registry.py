"""The agent tool registry: built-in per-repo tools, repo-scoped and cross-repo tools, by decorator.

A registered function's parameters are the tool's arguments (adapters derive the schema offered to the
model from its annotations and docstring), except three injected by name: `repo` (the RepoContext a
repo-scoped tool runs in), `repos` (every RepoContext, by name) and `tracker` (the WriteTracker of the
current turn).
"""

from __future__ import annotations

import fnmatch
import inspect
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, TypeVar

from attrs import Factory, field, frozen

from orchestra_core.agents.repo_context import RepoContext
from orchestra_core.agents.tools import AgentTool, ToolFailure, WriteTracker
from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.immutable import str_tuple

F = TypeVar("F", bound=Callable[..., Any])
INJECTED = ("repo", "repos", "tracker")
_MODIFIES_MARK = "__orchestra_modifies_files__"


class ToolRegistryError(OrchestraError):
    """A tool is registered twice, named badly, unknown, or cannot be built."""


def modifies_files(func: F) -> F:
    """Mark a tool whose return value is the list of files it modified; they are recorded for the turn.

    A repo-scoped tool returns repo-relative paths; a cross-repo tool returns `repo:path` entries.
    """
    setattr(func, _MODIFIES_MARK, True)
    return func


@frozen
class ToolSpec:
    """A registered tool before it is bound to repos.

    Attributes:
        name: The local name (`read-file`, `run-migration`); repo-scoped tools are offered as `repo:name`.
        func: The implementation.
        scope: `builtin` (generated for every repo), `repo` (one repo) or `global` (cross-repo).
        repo: The repo of a `repo`-scoped tool.
        description: Shown to the model (default: the docstring's summary).
        writes_files: The tool records its own writes in the tracker (built-in write tools).
        injected: The parameters of `func` Orchestra fills in (default: those of `repo`, `repos`, `tracker`
            it accepts); the others are the model's arguments.
    """

    name: str
    func: Callable[..., Any] = field(eq=False)
    scope: str
    repo: str | None = None
    description: str = ""
    writes_files: bool = False
    injected: tuple[str, ...] = field(
        default=Factory(lambda spec: injected_parameters(spec.func), takes_self=True), converter=str_tuple
    )

    @property
    def returns_modified_files(self) -> bool:
        return bool(getattr(self.func, _MODIFIES_MARK, False))

    def qualified_names(self, repos: Sequence[str]) -> list[str]:
        """The names this tool is offered under for a workspace with these repos."""
        if self.scope == "builtin":
            return [f"{repo}:{self.name}" for repo in repos]
        if self.scope == "repo":
            return [f"{self.repo}:{self.name}"] if self.repo in repos else []
        return [self.name]


class ToolRegistry:
    """Tools agents can be given, registered with decorators or from orchestra.yaml commands."""

    def __init__(self) -> None:
        self._specs: list[ToolSpec] = []

    @property
    def specs(self) -> tuple[ToolSpec, ...]:
        return tuple(self._specs)

    def register_builtin(self, name: str, *, description: str | None = None, writes_files: bool = False) -> Callable[[F], F]:
        """Decorator: a tool generated for every repo of the workspace as `{repo}:{name}`."""
        return self._decorator(name, "builtin", None, description, writes_files)

    def register(
        self, name: str, *, repo: str | None = None, description: str | None = None, writes_files: bool = False
    ) -> Callable[[F], F]:
        """Decorator: a tool for one repo (`repo="backend"` gives `backend:{name}`) or, without a repo,
        a cross-repo tool offered under its plain name."""
        return self._decorator(name, "repo" if repo else "global", repo, description, writes_files)

    def add(self, spec: ToolSpec) -> None:
        """Register a prepared spec.

        Raises:
            ToolRegistryError: The name is malformed or clashes with a registered tool.
        """
        if not spec.name or ":" in spec.name:
            raise ToolRegistryError(f"tool name {spec.name!r} must be non-empty and must not contain ':'")
        for existing in self._specs:
            if _clashes(existing, spec):
                raise ToolRegistryError(f"tool {spec.name!r} is registered twice ({_where(existing)} and {_where(spec)})")
        self._specs.append(spec)

    def names(self, repos: Sequence[str]) -> tuple[str, ...]:
        """Every tool name available in a workspace with these repos: each repo's built-in tools, then
        repo-scoped tools, then cross-repo tools, each group in registration order."""
        builtins = [spec for spec in self._specs if spec.scope == "builtin"]
        per_repo = [f"{repo}:{spec.name}" for repo in repos for spec in builtins]
        others = [name for spec in self._specs if spec.scope != "builtin" for name in spec.qualified_names(repos)]
        return (*per_repo, *others)

    def build(self, names: Iterable[str], repos: Mapping[str, RepoContext], tracker: WriteTracker) -> list[AgentTool]:
        """The AgentTools for the given qualified names, bound to the repos and the turn's tracker.

        Raises:
            ToolRegistryError: A name is unknown for these repos.
        """
        by_name = {name: spec for spec in self._specs for name in spec.qualified_names(list(repos))}
        tools = []
        for name in names:
            spec = by_name.get(name)
            if spec is None:
                raise ToolRegistryError(f"unknown tool {name!r} (available: {', '.join(by_name) or 'none'})")
            repo = repos[name.partition(":")[0]] if spec.scope != "global" else None
            tools.append(_bind(spec, name, repo, repos, tracker))
        return tools

    def _decorator(
        self, name: str, scope: str, repo: str | None, description: str | None, writes_files: bool
    ) -> Callable[[F], F]:
        def register(func: F) -> F:
            self.add(
                ToolSpec(
                    name=name,
                    func=func,
                    scope=scope,
                    repo=repo,
                    description=description or describe(func),
                    writes_files=writes_files,
                )
            )
            return func

        return register


def describe(func: Callable[..., Any]) -> str:
    """The docstring's text before its `Args:`/`Returns:`/`Raises:` sections."""
    doc = inspect.getdoc(func) or ""
    return re.split(r"\n\s*(?:Args|Arguments|Returns|Raises):\s*\n", doc, maxsplit=1)[0].strip()


def injected_parameters(func: Callable[..., Any]) -> tuple[str, ...]:
    """The parameters of `func` that Orchestra injects (`repo`, `repos`, `tracker`), in signature order."""
    return tuple(name for name in inspect.signature(func).parameters if name in INJECTED)


def matching(patterns: Iterable[str], names: Sequence[str]) -> tuple[list[str], list[str]]:
    """Names matched by any pattern (`backend:read-file`, `*:write-file`, `backend:*`), and unmatched patterns."""
    matched: list[str] = []
    unmatched: list[str] = []
    for pattern in patterns:
        hits = [name for name in names if fnmatch.fnmatchcase(name, pattern)]
        if not hits:
            unmatched.append(pattern)
        matched += [name for name in hits if name not in matched]
    return matched, unmatched


def _clashes(existing: ToolSpec, new: ToolSpec) -> bool:
    if existing.name != new.name:
        return False
    if "builtin" in (existing.scope, new.scope):
        return True
    return existing.scope == new.scope and existing.repo == new.repo


def _where(spec: ToolSpec) -> str:
    return {"builtin": "built-in", "repo": f"repo {spec.repo}", "global": "cross-repo"}[spec.scope]


def _bind(
    spec: ToolSpec, name: str, repo: RepoContext | None, repos: Mapping[str, RepoContext], tracker: WriteTracker
) -> AgentTool:
    injections = {"repo": repo, "repos": MappingProxyType(dict(repos)), "tracker": tracker}
    injected = {key: value for key, value in injections.items() if key in spec.injected}

    def call(**arguments: Any) -> str:
        try:
            result = spec.func(**arguments, **injected)
            if spec.returns_modified_files:
                return _record_modified(result, repo, repos, tracker)
            return result if isinstance(result, str) else str(result)
        except Exception as error:  # the model sees every tool failure as text and may recover
            return ToolFailure.of(_message(error))

    writes = spec.writes_files or spec.returns_modified_files
    return AgentTool(
        name=name,
        description=spec.description,
        func=call,
        writes_files=writes,
        source=spec.func,
        injected=spec.injected,
    )


def _record_modified(
    result: Any, repo: RepoContext | None, repos: Mapping[str, RepoContext], tracker: WriteTracker
) -> str:
    if isinstance(result, str) or not isinstance(result, Iterable):
        raise ToolRegistryError("a @modifies_files tool must return the list of paths it modified")
    recorded = []
    for entry in result:
        repo_name, path = _split_modified(str(entry), repo, repos)
        tracker.record(repo_name, path)
        recorded.append(f"{repo_name}:{path}")
    return f"Modified {len(recorded)} file(s): {', '.join(recorded)}" if recorded else "No files modified."


def _split_modified(entry: str, repo: RepoContext | None, repos: Mapping[str, RepoContext]) -> tuple[str, str]:
    if repo is None:
        repo_name, separator, entry = entry.partition(":")
        repo = repos.get(repo_name) if separator else None
        if repo is None:
            raise ToolRegistryError(f"a cross-repo tool must return modified files as repo:path, got {entry!r}")
    if entry.startswith(str(repo.root) + "/"):
        entry = entry[len(str(repo.root)) + 1 :]
    return repo.name, repo.relative_path(entry).as_posix()


def _message(error: BaseException) -> str:
    if isinstance(error, OrchestraError):
        return str(error)
    if isinstance(error, OSError) and error.strerror:
        return f"{error.strerror}: {error.filename}" if error.filename else error.strerror
    return f"{type(error).__name__}: {error}"
