"""The composition root: the one place that chooses adapters for the core's ports.

Commands set `config` (pipeline_path, config_path, cwd, backend) and ask for what they need. Providers
build their adapters through small factory functions that import lazily, so a command pays only for what
it uses (`compile` never imports the store, git or any LLM library).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from orchestra_cli.dependency_injection import containers, providers


def _clock() -> Any:
    from orchestra_core.ports.clock import SystemClock

    return SystemClock()


def _command_runner() -> Any:
    from orchestra_adapters.process.command_runner import SubprocessCommandRunner

    return SubprocessCommandRunner()


def _run_directories(clock: Any) -> Any:
    from orchestra_adapters.filesystem.run_directory import FileRunDirectories

    return FileRunDirectories(clock=clock)


def _settings(pipeline_path: str | None, config_path: str | None, cwd: str | None) -> Any:
    from orchestra_adapters.config.orchestra_yaml import discover_settings

    return discover_settings(
        Path(pipeline_path) if pipeline_path else None,
        Path(config_path) if config_path else None,
        Path(cwd) if cwd else Path.cwd(),
    )


def _project_root(settings: Any, cwd: str | None) -> Path:
    if settings.project_root is not None:
        return Path(settings.project_root)
    from orchestra_adapters.config.orchestra_yaml import find_project_root

    return find_project_root(Path(cwd) if cwd else Path.cwd())


def _session_store(settings: Any, project_root: Path, clock: Any) -> Any:
    from orchestra_adapters.storage.factory import open_session_store

    return open_session_store(settings.storage, project_root, clock=clock)


def _git() -> Any:
    from orchestra_adapters.git.subprocess_git import SubprocessGit

    return SubprocessGit()


def _chat_models(settings: Any) -> Any:
    from orchestra_adapters.llm.chat_model_factory import LangChainChatModelFactory

    return LangChainChatModelFactory(settings)


def _prompt_library(settings: Any, pipeline_path: str | None) -> Any:
    from orchestra_adapters.config.prompt_files import prompt_library_for

    return prompt_library_for(settings, Path(pipeline_path) if pipeline_path else None)


def _tool_registry(settings: Any, runner: Any) -> Any:
    from orchestra_core.agents.toolset import create_registry

    return create_registry(settings, runner)


def _agent_resolver(settings: Any, library: Any, registry: Any) -> Any:
    from orchestra_core.agents.resolver import AgentResolver

    return AgentResolver(settings, library, registry)


def _agent_lint_rules(settings: Any, library: Any, registry: Any) -> list[Any]:
    from orchestra_core.agents.lint import agent_lint_rules

    return agent_lint_rules(settings, library, registry)


class Container(containers.DeclarativeContainer):
    """Providers for every port; tests override them or pass fakes directly."""

    config = providers.Configuration()
    clock = providers.Singleton(_clock)
    command_runner = providers.Singleton(_command_runner)

    settings = providers.Singleton(_settings, config.pipeline_path, config.config_path, config.cwd)
    project_root = providers.Singleton(_project_root, settings, config.cwd)

    session_store = providers.Singleton(_session_store, settings, project_root, clock)
    git = providers.Singleton(_git)
    chat_models = providers.Singleton(_chat_models, settings)
    prompt_library = providers.Singleton(_prompt_library, settings, config.pipeline_path)
    tool_registry = providers.Singleton(_tool_registry, settings, command_runner)
    agent_resolver = providers.Singleton(_agent_resolver, settings, prompt_library, tool_registry)

    # Extra lint rules for `orchestra compile`: agents, prompt layers, models and tools resolve.
    compile_rules = providers.Callable(_agent_lint_rules, settings, prompt_library, tool_registry)
    run_directories = providers.Singleton(_run_directories, clock)
