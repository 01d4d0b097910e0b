"""Loading orchestra.yaml into OrchestraSettings, and finding which orchestra.yaml applies."""

from __future__ import annotations

import difflib
import json
import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attrs import evolve

from orchestra_core.agents.command_template import CommandTemplateError, slots
from orchestra_core.model.layout import STATE_DIR
from orchestra_core.model.settings import (
    ConfigError,
    ConfigProblem,
    NotifyTargetSettings,
    OrchestraSettings,
    RepoSettings,
    ToolCommandSettings,
)

CONFIG_NAME = "orchestra.yaml"
CONFIG_ENV = "ORCHESTRA_CONFIG"
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_PARAMETER_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
ENV_NAME_RE = _PARAMETER_RE  # an environment variable's name

if TYPE_CHECKING:
    from orchestra_adapters.config.yaml_source import KeyPath, YamlSource


def load_settings(path: Path, *, project_root: Path | None = None) -> OrchestraSettings:
    """Load one orchestra.yaml; an empty file gives the defaults.

    Args:
        path: The file.
        project_root: Recorded in the settings (where `.orchestra/` lives and the implicit repo's root).

    Raises:
        ConfigError: The file is unreadable, is not YAML, has an unknown key, a value of the wrong type or
            an inconsistent setting; every problem names the file, line and key path.
    """
    # ruamel and cattrs are imported only when there is a file to read (start-up of zero-config runs).
    from orchestra_adapters.config.structuring import structure_yaml
    from orchestra_adapters.config.yaml_source import read_yaml

    source = read_yaml(path, str(path))
    if source.data is not None and not isinstance(source.data, dict):
        raise ConfigError.at("expected a mapping of settings at the top level", file=source.file, line=1)
    settings = structure_yaml(source, OrchestraSettings, source.data or {})
    problems = sorted(_consistency_problems(source, settings), key=lambda p: p.line or 0)
    if problems:
        raise ConfigError(problems)
    return evolve(settings, source_path=path.resolve(), project_root=project_root)


def settings_from_dict(data: Mapping[str, Any], *, project_root: Path) -> OrchestraSettings:
    """Settings given as a dict shaped like orchestra.yaml (relative paths from `project_root`).

    Raises:
        ConfigError: An unknown key, a value of the wrong type or an inconsistent setting; every problem
            names its key path.
    """
    from orchestra_adapters.config.structuring import structure_yaml
    from orchestra_adapters.config.yaml_source import parse_yaml

    try:
        text = json.dumps(dict(data))
    except (TypeError, ValueError) as error:
        raise ConfigError.at(f"settings must be plain data: {error}", file="<config>") from None
    source = parse_yaml(text, "<config>")
    settings = structure_yaml(source, OrchestraSettings, source.data or {})
    problems = list(_consistency_problems(source, settings))
    if problems:
        raise ConfigError(problems)
    return evolve(settings, project_root=project_root.resolve())


def discover_settings(pipeline_path: Path | None, explicit: Path | None, cwd: Path) -> OrchestraSettings:
    """The settings that apply to a command; the first file found wins (files are not merged).

    Order: `explicit` (`--config`), then `$ORCHESTRA_CONFIG`, then orchestra.yaml next to the pipeline,
    then the project's orchestra.yaml (see `find_project_root`), then `~/.orchestra/orchestra.yaml`;
    none found gives the defaults. Relative paths are taken from `cwd`.

    Raises:
        ConfigError: An explicitly named file is missing, or the chosen file is invalid.
    """
    project_root = find_project_root(cwd)
    chosen = explicit or _env_config()
    if chosen is not None:
        return load_settings(cwd / chosen.expanduser(), project_root=project_root)
    for candidate in _candidates(cwd / pipeline_path if pipeline_path else None, project_root):
        if _present(candidate):  # a FIFO or directory in its place is an error, not a file to skip
            return load_settings(candidate, project_root=project_root)
    return OrchestraSettings(project_root=project_root)


def find_project_root(cwd: Path) -> Path:
    """The nearest directory from `cwd` upwards holding orchestra.yaml or `.orchestra/`, else `cwd`.

    The home directory counts only through an orchestra.yaml: its `.orchestra/` is the global
    configuration directory, not a project marker.
    """
    start = cwd.resolve()
    home = Path.home().resolve()
    for directory in (start, *start.parents):
        if _present(directory / CONFIG_NAME):
            return directory
        if directory != home and (directory / STATE_DIR).is_dir():
            return directory
    return start


def _present(path: Path) -> bool:
    """Whether something is there under that name (a dangling symlink, a FIFO, a directory included)."""
    return path.exists() or path.is_symlink()


def global_config_dir() -> Path:
    """`~/.orchestra/`: the global fallback for orchestra.yaml and prompts."""
    return Path.home() / STATE_DIR


def _env_config() -> Path | None:
    value = os.environ.get(CONFIG_ENV, "").strip()
    return Path(value) if value else None


def _candidates(pipeline_path: Path | None, project_root: Path) -> list[Path]:
    found = []
    if pipeline_path is not None:
        found.append(pipeline_path.resolve().parent / CONFIG_NAME)
    found += [project_root / CONFIG_NAME, global_config_dir() / CONFIG_NAME]
    return found


def _consistency_problems(source: YamlSource, settings: OrchestraSettings) -> Iterator[ConfigProblem]:
    from orchestra_adapters.config.yaml_source import render_key_path

    def problem(path: KeyPath, detail: str) -> ConfigProblem:
        return ConfigProblem(detail, source.file, source.line_of(path), render_key_path(path))

    providers = settings.providers
    if providers.default and providers.entries and providers.default not in providers.entries:
        yield problem(("providers", "default"), _not_among(providers.default, list(providers.entries), "provider"))
    if any(entry.fallbacks for entry in providers.entries.values()):
        from orchestra_core.agents.models import ModelResolver

        yield from (problem(found.path, found.detail) for found in ModelResolver(providers).fallbacks.problems())
    for name, repo_settings in settings.workspace.repos.items():
        if not _NAME_RE.match(name):
            yield problem(("workspace", "repos", name), _bad_name("repo"))
        yield from (problem(("workspace", "repos", name, key), detail) for key, detail in _remote_problems(repo_settings))
    known_repos = list(settings.workspace.repo_names())
    for repo, tools in settings.workspace.tools.items():
        if repo not in known_repos:
            yield problem(("workspace", "tools", repo), _not_among(repo, known_repos, "repo in workspace.repos"))
        for tool, command in tools.items():
            path = ("workspace", "tools", repo, tool)
            if not _NAME_RE.match(tool):
                yield problem(path, _bad_name("tool"))
            yield from (problem((*path, *sub), detail) for sub, detail in _parameter_problems(command))
    for index, target in enumerate(settings.notify):
        yield from (problem(("notify", index, *sub), detail) for sub, detail in _notify_problems(target))
    from orchestra_adapters.telemetry.export_settings import telemetry_problems

    yield from (problem(("telemetry", *sub), detail) for sub, detail in telemetry_problems(settings.telemetry))


def _remote_problems(repo: RepoSettings) -> Iterator[tuple[str, str]]:
    if repo.remote is not None and (not repo.remote.strip() or repo.remote.startswith("-")):
        yield "remote", "a remote is a non-empty URL or path that does not start with '-'"
    if repo.clone_depth is not None and repo.clone_depth < 1:
        yield "clone_depth", f"must be a positive number of commits, not {repo.clone_depth}"
    if repo.remote is None:
        if repo.push not in (None, "never"):
            yield "push", f"push: {repo.push} needs a remote; set workspace.repos.<name>.remote"
        if repo.clone_depth is not None:
            yield "clone_depth", "clone_depth needs a remote to clone from"


def _parameter_problems(command: ToolCommandSettings) -> Iterator[tuple[KeyPath, str]]:
    try:
        slots(command.command, command.parameters)
    except CommandTemplateError as error:
        yield ("command",), str(error)
    for name in command.parameters:
        key = ("parameters", name)
        if not _PARAMETER_RE.match(name):
            yield key, "parameter names are letters, digits and _ (not starting with a digit)"
        elif "{" + name + "}" not in command.command:
            yield key, f"the command does not use {{{name}}}; name it in the command or remove the parameter"


def _notify_problems(target: NotifyTargetSettings) -> Iterator[tuple[KeyPath, str]]:
    given = [key for key in ("url", "url_env", "command") if getattr(target, key)]
    if not given:
        yield (), "a notification target needs a webhook (`url` or `url_env`) or a `command`"
    elif len(given) > 1:
        yield (given[1],), f"a target is one webhook or one command: give one of url, url_env and command, not {' and '.join(given)}"
    if target.url is not None:
        from orchestra_adapters.notify.addresses import webhook_problem

        detail = webhook_problem(target.url)
        if detail is not None:
            yield ("url",), detail
    for key in ("url_env", "secret_env"):
        name = getattr(target, key)
        if name is not None and not ENV_NAME_RE.match(name):
            yield (key,), "an environment variable's name is letters, digits and _ (not starting with a digit)"
    if target.command and not target.command[0].strip():
        yield ("command",), "the first item is the program to run; it is empty"
    if any("\0" in part for part in target.command):
        yield ("command",), "a NUL character cannot be part of a command's arguments"
    if not target.webhook:
        if target.secret_env is not None:
            yield ("secret_env",), "secret_env signs webhook bodies; a command gets the notification on its standard input"
        if target.format != "json":
            yield ("format",), "format: slack is for webhooks; a command gets Orchestra's JSON on its standard input"


def _bad_name(kind: str) -> str:
    return f"a {kind} name is letters, digits, '.', '_' and '-' (no ':', which separates repo and tool)"


def _not_among(name: str, known: list[str], kind: str) -> str:
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]}?" if close else f"known: {', '.join(known) or 'none'}"
    return f"no {kind} named {name!r} ({hint})"
