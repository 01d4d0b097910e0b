"""The `workspace.tools` commands of orchestra.yaml as repo-scoped agent tools, run through CommandRunner.

The command text comes from the configuration only; this module is the one command builder agent values go
through. The model fills in the parameters the configuration declares (`{name}` in the command): each
value is shell-quoted (data, never code), may not hold a line break or NUL, and may not start with `-`
where it would begin a word of the command (an option) unless a `--` word ends the options of its simple
command before it. Where a placeholder sits is read as `/bin/sh` reads the command (command_template.py); one
inside quotes is refused, since a quoted value is unquoted or expanded there (docs/configuration.md).
"""

from __future__ import annotations

import inspect
import shlex
from collections.abc import Callable, Mapping
from typing import Annotated, Any

from orchestra_core.agents.command_template import PARAMETER, TEXT, CommandTemplateError, Slot, slots
from orchestra_core.agents.registry import ToolRegistry, ToolRegistryError, ToolSpec
from orchestra_core.agents.repo_context import RepoContext
from orchestra_core.agents.tools import ToolFailure
from orchestra_core.model.cancellation import takes_keyword
from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.settings import ToolCommandSettings
from orchestra_core.ports.command_runner import CommandResult, CommandRunner

DEFAULT_TIMEOUT_S = 600.0
MAX_OUTPUT_CHARS = 20_000


def register_command_tools(
    registry: ToolRegistry,
    tools: Mapping[str, Mapping[str, ToolCommandSettings]],
    runner: CommandRunner | None,
) -> ToolRegistry:
    """Register every `workspace.tools.<repo>.<tool>` as the repo-scoped tool `<repo>:<tool>`.

    Args:
        registry: Where to register them.
        tools: `OrchestraSettings.workspace.tools`.
        runner: Runs the commands; None registers the names only (for `orchestra compile`), and calling
            such a tool reports that commands cannot run here.

    Raises:
        ToolRegistryError: A command's name clashes with a built-in or another tool of the same repo, or
            a parameter name cannot be a keyword argument.
    """
    for repo, commands in tools.items():
        for name, settings in commands.items():
            registry.add(
                ToolSpec(
                    name=name,
                    func=_typed(_command_function(settings, runner), settings, f"{repo}:{name}"),
                    scope="repo",
                    repo=repo,
                    description=settings.description or f"Run `{settings.command}` in the {repo} repo.",
                )
            )
    return registry


class CommandArgumentError(OrchestraError):
    """A value given for a command's parameter could become code or an option; the tool refuses it."""


def expand_command(settings: ToolCommandSettings, arguments: Mapping[str, Any]) -> str:
    """The command with each declared `{parameter}` replaced by its shell-quoted value (or default).

    Substitution is a single pass, so a value that itself contains `{other}` stays literal text.

    Raises:
        CommandTemplateError: A placeholder stands inside quotes or after a backslash in the command.
        CommandArgumentError: A value holds a line break or NUL, or starts with `-` where it begins a
            word of the command (the pieces of its word before it are empty) and no `--` word ends the
            options of its simple command before it.
    """
    if not settings.parameters:
        return settings.command
    values = {
        name: str(arguments[name]) if arguments.get(name) is not None else parameter.default or ""
        for name, parameter in settings.parameters.items()
    }
    pieces: list[str] = []
    position = 0
    for slot in slots(settings.command, settings.parameters):
        value = values[slot.name]
        if arguments.get(slot.name) is not None:  # the default is the pipeline author's, trusted like the command
            _check_value(slot.name, value, option_allowed=slot.options_ended or not _begins_word(slot, values))
        pieces += [settings.command[position : slot.start], shlex.quote(value)]
        position = slot.end
    return "".join([*pieces, settings.command[position:]])


def _begins_word(slot: Slot, values: Mapping[str, str]) -> bool:
    """Whether the value may begin its shell word: what precedes it there may all be empty."""
    return not any(
        piece.kind == TEXT or (piece.kind == PARAMETER and values.get(piece.text)) for piece in slot.before
    )


def _check_value(name: str, value: str, *, option_allowed: bool) -> None:
    if any(char in value for char in "\n\r\0"):
        raise CommandArgumentError(f"{name}: a value may not hold a line break or a NUL character")
    if value.startswith("-") and not option_allowed:
        raise CommandArgumentError(
            f"{name}: {value!r} starts with '-' and would be read as an option of the command; "
            "give a value that does not start with '-'"
        )


def format_result(command: str, result: CommandResult) -> str:
    """The text the model sees: exit status, then the tails of stdout and stderr."""
    if result.timed_out:
        status = f"timed out after {result.duration_s:.1f}s and was stopped"
    elif result.cancelled:
        status = f"cancelled after {result.duration_s:.1f}s (its node timed out) and was stopped"
    else:
        status = f"exit code {result.exit_code} ({result.duration_s:.1f}s)"
    parts = [f"$ {command}", status]
    for label, text in (("stdout", result.stdout), ("stderr", result.stderr)):
        if text:
            parts += [f"--- {label} ---", _tail(text)]
    return "\n".join(parts)


def _command_function(settings: ToolCommandSettings, runner: CommandRunner | None) -> Callable[..., str]:
    def run_command(repo: RepoContext, **arguments: Any) -> str:
        if runner is None:
            return ToolFailure.of("commands cannot run here (no command runner)")
        try:
            command = expand_command(settings, arguments)
        except (CommandArgumentError, CommandTemplateError) as error:
            return ToolFailure.of(str(error))
        extra: dict[str, Any] = {}
        if repo.protected and takes_keyword(runner.run, "protected"):
            extra["protected"] = tuple(str(path) for path in repo.protected)
        result = runner.run(
            command,
            cwd=str(repo.root),
            env={"ORCHESTRA_REPO": repo.name, "ORCHESTRA_REPO_ROOT": str(repo.root)},
            timeout=settings.timeout or DEFAULT_TIMEOUT_S,
            writable=(str(repo.root),),
            **extra,
        )
        text = format_result(command, result)
        return ToolFailure.of(text) if result.timed_out or result.cancelled else text

    return run_command


def _typed(func: Callable[..., str], settings: ToolCommandSettings, tool: str) -> Callable[..., str]:
    """Give the command's function the signature its declared parameters make: each a string, required
    unless it has a default, described by an `Annotated` note, so its schema is built as for any tool."""
    annotations: dict[str, Any] = {"repo": RepoContext, "return": str}
    parameters = [inspect.Parameter("repo", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=RepoContext)]
    try:
        for name, parameter in settings.parameters.items():
            annotations[name] = Annotated[str, parameter.description] if parameter.description else str
            default = inspect.Parameter.empty if parameter.default is None else parameter.default
            keyword = inspect.Parameter.KEYWORD_ONLY
            parameters.append(inspect.Parameter(name, keyword, default=default, annotation=annotations[name]))
        signature = inspect.Signature(parameters, return_annotation=str)
    except ValueError as error:  # a Python keyword, or the injected `repo`
        raise ToolRegistryError(f"tool {tool}: {error} (rename the parameter)") from None
    func.__signature__ = signature  # type: ignore[attr-defined]
    func.__annotations__ = annotations
    return func


def _tail(text: str) -> str:
    if len(text) <= MAX_OUTPUT_CHARS:
        return text.rstrip("\n")
    return f"[... {len(text) - MAX_OUTPUT_CHARS} earlier characters cut ...]\n" + text[-MAX_OUTPUT_CHARS:].rstrip("\n")
