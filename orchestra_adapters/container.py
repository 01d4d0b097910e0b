"""The composition root: the one place that chooses adapters for the core's ports.

`build_container()` makes one per process (per CLI command) from an orchestra.yaml path (or discovery, as
the CLI does) or from a dict. Every port is a typed provider that tests and embedding tools override:

    container = build_container(config={"storage": {"path": "runs.db"}}, project_root=tmp)
    container.session_store.override(providers.Object(InMemorySessionStore()))
    result = run_pipeline(graph, **run_arguments(container))

Providers build their adapters through small factory functions that import lazily, so a command pays only
for what it uses (`compile` never imports the store, git or any LLM library).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orchestra_adapters.collector import collector_paused
from orchestra_adapters.dependency_injection import containers, providers
from orchestra_core.model.layout import ProjectLayout

if TYPE_CHECKING:
    from orchestra_core.agents.registry import ToolRegistry
    from orchestra_core.agents.resolver import AgentResolver
    from orchestra_core.model.graph import Graph
    from orchestra_core.model.settings import OrchestraSettings
    from orchestra_core.ports.chat_models import ChatModelFactory
    from orchestra_core.ports.clock import Clock
    from orchestra_core.ports.codergen_backend import CodergenBackend
    from orchestra_core.ports.command_runner import CommandRunner
    from orchestra_core.ports.commit_messages import CommitMessageGenerator
    from orchestra_core.ports.git import Git
    from orchestra_core.ports.git_remotes import GitRemotes
    from orchestra_core.ports.interviewer import Interviewer
    from orchestra_core.ports.notifier import Notifier
    from orchestra_core.ports.prompt_library import PromptLibrary
    from orchestra_core.ports.run_directory import RunDirectoryFactory
    from orchestra_core.ports.session_locks import SessionLocks
    from orchestra_core.ports.session_store import SessionStore
    from orchestra_core.ports.tracer import Tracer
    from orchestra_core.runs.ports import AgentRuntime, BackendFactory


def _clock() -> Clock:
    from orchestra_core.ports.clock import SystemClock

    return SystemClock()


def _command_runner(settings: OrchestraSettings) -> CommandRunner:
    """Commands in process groups that die with the runner; in a bubblewrap sandbox when `sandbox` says so."""
    from orchestra_adapters.process.sandbox import sandboxed_runner

    return sandboxed_runner(settings)


def _run_directories(clock: Clock) -> RunDirectoryFactory:
    from orchestra_adapters.filesystem.run_directory import FileRunDirectories

    return FileRunDirectories(clock=clock)


def _settings(
    pipeline_path: str | None, config_path: str | None, config: Mapping[str, Any] | None, cwd: str | None,
    project_root: str | None,
) -> OrchestraSettings:
    from orchestra_adapters.config.orchestra_yaml import discover_settings, settings_from_dict

    here = Path(cwd) if cwd else Path.cwd()
    if config is not None:
        return settings_from_dict(config, project_root=Path(project_root) if project_root else here)
    return discover_settings(Path(pipeline_path) if pipeline_path else None, Path(config_path) if config_path else None, here)


def _project_root(settings: OrchestraSettings, cwd: str | None) -> Path:
    if settings.project_root is not None:
        return Path(settings.project_root)
    from orchestra_adapters.config.orchestra_yaml import find_project_root

    return find_project_root(Path(cwd) if cwd else Path.cwd())


def _session_store(settings: OrchestraSettings, project_root: Path, clock: Clock) -> Iterator[SessionStore]:
    from orchestra_adapters.storage.factory import open_session_store

    store = open_session_store(settings.storage, project_root, clock=clock)
    try:
        yield store
    finally:
        store.close()


def _notifier(settings: OrchestraSettings, project_root: Path) -> Iterator[Notifier | None]:
    """`notify:`'s targets behind a background notifier; None (and nothing imported) without any."""
    if not settings.notify:
        yield None
        return
    from orchestra_adapters.notify.factory import notifier_from_settings

    notifier = notifier_from_settings(settings, project_root)
    try:
        yield notifier
    finally:
        notifier.close()


def _tracer(settings: OrchestraSettings) -> Iterator[Tracer | None]:
    """OTLP/HTTP traces when `telemetry.otlp_endpoint` or an OTEL_EXPORTER_OTLP_*ENDPOINT variable says where;
    otherwise None, and OpenTelemetry is never imported."""
    import os

    from orchestra_adapters.telemetry.export_settings import trace_export

    export = trace_export(settings, os.environ)
    if export is None:
        yield None
        return
    from orchestra_adapters.telemetry.otlp_tracer import OtlpTracer

    tracer = OtlpTracer(export)
    try:
        yield tracer
    finally:
        tracer.close()


def _git() -> Git:
    from orchestra_adapters.git.subprocess_git import SubprocessGit

    return SubprocessGit()


def _git_remotes() -> GitRemotes:
    from orchestra_adapters.git.remotes import SubprocessGitRemotes

    return SubprocessGitRemotes()


def _session_locks(settings: OrchestraSettings, project_root: Path) -> SessionLocks:
    """Lock files on this machine; with a PostgreSQL store, advisory locks in its database (seen by every machine)."""
    if settings.storage.backend == "postgres":
        from orchestra_adapters.locks.postgres_session_locks import PostgresSessionLocks
        from orchestra_adapters.storage.postgres.dsn import configured_dsn

        return PostgresSessionLocks(configured_dsn(settings.storage))
    from orchestra_adapters.locks import FileSessionLocks

    return FileSessionLocks(ProjectLayout(project_root).locks_dir)


def _chat_models(settings: OrchestraSettings) -> ChatModelFactory:
    from orchestra_adapters.llm.chat_model_factory import LangChainChatModelFactory

    return LangChainChatModelFactory(settings)


def _commit_messages(chat_models: ChatModelFactory, settings: OrchestraSettings) -> CommitMessageGenerator | None:
    """The cheap model's commit messages; None without any provider (CLI agents bring their own models),
    and then each commit gets the deterministic message."""
    if not settings.providers.entries and not settings.providers.default:
        return None
    with collector_paused():
        from orchestra_adapters.llm.commit_messages import ChatModelCommitMessages

        provider = settings.providers.default or next(iter(settings.providers.entries), "")
        return ChatModelCommitMessages(chat_models.create("", "", purpose="commit_message"), provider=provider)


def _prompt_library(settings: OrchestraSettings, pipeline_path: str | None) -> PromptLibrary:
    from orchestra_adapters.config.prompt_files import prompt_library_for

    return prompt_library_for(settings, Path(pipeline_path) if pipeline_path else None)


def _tool_registry(settings: OrchestraSettings, runner: CommandRunner) -> ToolRegistry:
    from orchestra_core.agents.toolset import create_registry

    return create_registry(settings, runner)


def _agent_resolver(settings: OrchestraSettings, library: PromptLibrary, registry: ToolRegistry) -> AgentResolver:
    from orchestra_core.agents.resolver import AgentResolver

    return AgentResolver(settings, library, registry)


def _agent_lint_rules(settings: OrchestraSettings, library: PromptLibrary, registry: ToolRegistry) -> list[Any]:
    from orchestra_core.agents.lint import agent_lint_rules

    return agent_lint_rules(settings, library, registry)


def _backend_name(configured: str | None, settings: OrchestraSettings) -> str:
    """The backend asked for, else orchestra.yaml's, else `langgraph` with providers, else `simulate`."""
    if configured:
        return configured
    if settings.backend:
        return str(settings.backend)
    return "langgraph" if settings.providers.entries else "simulate"


def _backend_factory(name: str, chat_models: ChatModelFactory, settings: OrchestraSettings) -> BackendFactory:
    """The run's backend: `name` for its nodes, each node's `backend` attribute for that node (a
    RoutingBackend that builds every backend it needs once per run)."""

    def build(runtime: AgentRuntime) -> CodergenBackend | None:
        from orchestra_adapters.backends.registry import create_backend
        from orchestra_adapters.backends.routing import RoutingBackend

        def make(chosen: str) -> CodergenBackend | None:
            return create_backend(
                chosen,
                chat_models=chat_models,
                resolver=runtime.resolver,
                toolset=runtime,
                state_path=ProjectLayout(runtime.project_root).agents_db,
                tool_hooks=runtime.tool_hooks,
                runtime=runtime,
                settings=settings,
            )

        routing = RoutingBackend(name, make)
        routing.prepare()  # the run's own backend fails the run's start, not its first node
        return routing

    return build


def _compile_rules(
    settings: OrchestraSettings, library: PromptLibrary, registry: ToolRegistry, backend: str | None
) -> list[Any]:
    from orchestra_adapters.backends.lint import backend_lint_rules

    return [*_agent_lint_rules(settings, library, registry), *backend_lint_rules(settings, requested=backend)]


def _run_rules(
    settings: OrchestraSettings, library: PromptLibrary, registry: ToolRegistry, backend: str | None
) -> list[Any]:
    """`compile`'s rules: a run validates exactly as `orchestra compile` does, before anything is recorded.
    Only the run's own backend is left out: `run` refuses an unknown one as bad input (exit 2)."""
    from orchestra_adapters.backends.lint import backend_lint_rules

    return [
        *_agent_lint_rules(settings, library, registry),
        *backend_lint_rules(settings, requested=backend, check_run_backend=False),
    ]


class Container(containers.DeclarativeContainer):
    """Providers for every port; tests override them (`container.git.override(...)`) or pass fakes directly.

    Configuration keys: `pipeline_path`, `config_path` (an orchestra.yaml), `config` (a settings dict
    instead of a file), `cwd`, `project_root` (with `config`), `backend` (a backend name).
    """

    config = providers.Configuration()
    clock = providers.Singleton(_clock)

    settings = providers.Singleton(
        _settings, config.pipeline_path, config.config_path, config.config, config.cwd, config.project_root
    )
    project_root = providers.Singleton(_project_root, settings, config.cwd)
    command_runner = providers.Singleton(_command_runner, settings)

    session_store = providers.Resource(_session_store, settings, project_root, clock)
    session_locks = providers.Singleton(_session_locks, settings, project_root)
    notifier = providers.Resource(_notifier, settings, project_root)
    tracer = providers.Resource(_tracer, settings)
    git = providers.Singleton(_git)
    git_remotes = providers.Singleton(_git_remotes)
    chat_models = providers.Singleton(_chat_models, settings)
    commit_messages = providers.Singleton(_commit_messages, chat_models, settings)
    prompt_library = providers.Singleton(_prompt_library, settings, config.pipeline_path)
    tool_registry = providers.Singleton(_tool_registry, settings, command_runner)
    agent_resolver = providers.Singleton(_agent_resolver, settings, prompt_library, tool_registry)
    backend_name = providers.Callable(_backend_name, config.backend, settings)
    backend = providers.Factory(_backend_factory, backend_name, chat_models, settings)
    run_directories = providers.Singleton(_run_directories, clock)

    # Extra lint rules for `orchestra compile`: agents, prompt layers, models and tools resolve; backends
    # are known and CLI agents' executables found.
    compile_rules = providers.Callable(_compile_rules, settings, prompt_library, tool_registry, config.backend)
    # The rules `orchestra run` (resume, replay) adds before it creates a session: compile's rules.
    run_rules = providers.Callable(_run_rules, settings, prompt_library, tool_registry, config.backend)


def build_container(
    *,
    config_path: str | Path | None = None,
    config: Mapping[str, Any] | None = None,
    pipeline_path: str | Path | None = None,
    cwd: str | Path | None = None,
    project_root: str | Path | None = None,
    backend: str | None = None,
) -> Container:
    """The composition root for this process.

    Args:
        config_path: An orchestra.yaml to use; else discovery as the CLI does it (next to the pipeline, the
            project's, `~/.orchestra/`).
        config: Settings as a dict shaped like orchestra.yaml, instead of a file.
        pipeline_path: The pipeline being run (for discovery and prompt search paths).
        cwd: Where relative paths start (default: the current directory).
        project_root: The project root, with `config` (default: found from `cwd`).
        backend: The run's backend name (`langgraph`, `direct`, `simulate`, `claude-code`, `codex`);
            default: orchestra.yaml's `backend` (or `pipelines.<name>.backend` when `run_arguments` gets
            the graph), else `langgraph` when providers are configured, else `simulate`.
    """
    container = Container()
    container.config.from_dict(
        {
            "pipeline_path": str(pipeline_path) if pipeline_path else None,
            "config_path": str(config_path) if config_path else None,
            "config": dict(config) if config is not None else None,
            "cwd": str(cwd or Path.cwd()),
            "project_root": str(project_root) if project_root else None,
            "backend": backend,
        }
    )
    return container


def run_arguments(
    container: Container,
    *,
    interviewer: Interviewer | None = None,
    llm: bool | None = None,
    graph: Graph | None = None,
) -> dict[str, Any]:
    """The keyword arguments of `orchestra_core.run_pipeline` (and resume/replay) for this container: its
    settings, project root and adapters.

    Args:
        container: The composition root.
        interviewer: Answers human gates (the CLI's console, an answers file, ...).
        llm: Whether the run talks to models (False: simulation, no backend and no commit message model);
            default: unless the container's backend is `simulate`.
        graph: The pipeline to be run. With it, `pipelines.<name>.backend` applies when no backend was
            asked for, and a `simulate` run still gets a backend when one of its nodes names another
            (`backend` attribute); that node runs it, the others are simulated.
    """
    if graph is not None and not container.config.backend():
        container.config.backend.from_value(container.settings().backend_for(graph.name))
    if llm is None:
        llm = container.backend_name() != "simulate"
        # A simulated run whose nodes name backends of their own runs those nodes with them.
        routed = graph is not None and _nodes_name_a_backend(graph)
    else:
        routed = False
    backend = container.backend() if llm or routed else None
    notifier = container.notifier()  # first: a variable it needs that is not set stops the run before the store opens
    return {
        "notifier": notifier,
        "settings": container.settings(),
        "project_root": container.project_root(),
        "tracer": container.tracer(),  # before the store: a bad OTEL_* variable opens nothing
        "store": container.session_store(),
        "backend": backend,
        "interviewer": interviewer,
        "command_runner": container.command_runner(),
        "git": container.git(),
        "git_remotes": container.git_remotes(),
        "commit_messages": container.commit_messages() if llm else None,
        "prompt_library": container.prompt_library(),
        "session_locks": container.session_locks(),
        "run_directories": container.run_directories(),
        "clock": container.clock(),
    }


def _nodes_name_a_backend(graph: Graph) -> bool:
    from orchestra_adapters.backends.routing import SIMULATE, node_backend

    return any(node_backend(node) not in (None, SIMULATE) for node in graph.nodes.values())


def close_container(container: Container) -> None:
    """Close what the container opened (the session store, when it was opened)."""
    container.shutdown_resources()
