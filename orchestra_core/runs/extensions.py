"""Extensions: custom handlers, agent tools, lint rules and graph transforms, registered in one place."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from orchestra_core.agents.registry import ToolRegistry
from orchestra_core.agents.toolset import create_registry
from orchestra_core.engine.stage import Handler
from orchestra_core.handlers import BUILT_IN_TYPES, HandlerRegistry
from orchestra_core.model.settings import OrchestraSettings
from orchestra_core.ports.command_runner import CommandRunner
from orchestra_core.transforms import Transform
from orchestra_core.validation import LintRule

F = TypeVar("F", bound=Callable[..., Any])


class Extensions:
    """What an embedding tool adds to Orchestra: pass it to `load_pipeline`, `validate` and the run functions.

    Registering is not global: each Extensions object is its own set, so two tools in one process (or two
    tests) do not see each other's additions.
    """

    def __init__(self) -> None:
        self._handlers: dict[str, Handler] = {}
        self._rules: list[LintRule] = []
        self._transforms: list[Transform] = []
        self._tools: list[Callable[[ToolRegistry], None]] = []

    def register_handler(self, type_name: str, handler: Handler) -> None:
        """Run nodes whose `type` (or shape mapping) is `type_name` with `handler` (replaces a built-in one).

        Raises:
            ValueError: `type_name` is empty.
        """
        if not type_name.strip():
            raise ValueError("a handler type must be a non-empty string")
        self._handlers[type_name] = handler

    def register_lint_rule(self, rule: LintRule) -> None:
        """Run `rule` after the built-in validation rules."""
        self._rules.append(rule)

    def register_transform(self, transform: Transform) -> None:
        """Run `transform` on every loaded pipeline, after the built-in transforms and earlier custom ones."""
        self._transforms.append(transform)

    def register_tool(
        self,
        name: str,
        *,
        repo: str | None = None,
        cross_repo: bool = False,
        description: str | None = None,
        writes_files: bool = False,
    ) -> Callable[[F], F]:
        """A decorator that makes a Python function an agent tool.

        By default the tool is offered in every repo as `{repo}:{name}`; `repo="backend"` offers it in one
        repo only (`backend:{name}`), `cross_repo=True` once under its plain name. The function's typed
        parameters are the tool's arguments and its docstring the description; parameters named `repo`
        (the RepoContext), `repos` (every repo's) and `tracker` (the turn's WriteTracker) are filled in by
        Orchestra. Agents get such a tool when their `tools` list names it (docs/agents.md).
        """

        def register(func: F) -> F:
            def add(registry: ToolRegistry) -> None:
                if repo is None and not cross_repo:
                    registry.register_builtin(name, description=description, writes_files=writes_files)(func)
                else:
                    registry.register(name, repo=repo, description=description, writes_files=writes_files)(func)

            self._tools.append(add)
            return func

        return register

    @property
    def handler_types(self) -> frozenset[str]:
        """Every handler type a run knows: the built-in ones and the registered ones."""
        return frozenset((*BUILT_IN_TYPES, *self._handlers))

    @property
    def lint_rules(self) -> Sequence[LintRule]:
        return tuple(self._rules)

    @property
    def transforms(self) -> Sequence[Transform]:
        return tuple(self._transforms)

    def install_handlers(self, registry: HandlerRegistry) -> HandlerRegistry:
        """Register the custom handlers on a run's handler registry."""
        for type_name, handler in self._handlers.items():
            registry.register(type_name, handler)
        return registry

    def tool_registry(self, settings: OrchestraSettings, runner: CommandRunner | None) -> ToolRegistry:
        """The built-in tools, the project's `workspace.tools` commands and the registered tools."""
        registry = create_registry(settings, runner)
        for add in self._tools:
            add(registry)
        return registry
