"""The composition root: the one place that chooses adapters for the core's ports."""

from __future__ import annotations

from dependency_injector import containers, providers

from orchestra_adapters.filesystem.run_directory import FileRunDirectories
from orchestra_adapters.process.command_runner import SubprocessCommandRunner
from orchestra_adapters.process.system_clock import SystemClock
from orchestra_core.engine.session_ids import new_session_id


class Container(containers.DeclarativeContainer):
    """Providers for every port; tests override them or pass fakes directly."""

    config = providers.Configuration()
    clock = providers.Singleton(SystemClock)
    command_runner = providers.Singleton(SubprocessCommandRunner)
    # Extra lint rules for `orchestra compile` (agent, model and tool resolution are added here later).
    compile_rules = providers.List()
    # The engine: session ids (until the session store hands them out), run directories, codergen
    # backends by name (`None` is the engine's simulation mode; add real backends as more keys).
    session_id = providers.Callable(new_session_id, clock)
    run_directories = providers.Singleton(FileRunDirectories, clock=clock)
    codergen_backend = providers.Selector(config.backend, simulate=providers.Object(None))
