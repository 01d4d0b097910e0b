"""The composition root: the one place that chooses adapters for the core's ports."""

from __future__ import annotations

from dependency_injector import containers, providers

from orchestra_adapters.process.command_runner import SubprocessCommandRunner
from orchestra_adapters.process.system_clock import SystemClock


class Container(containers.DeclarativeContainer):
    """Providers for every port; tests override them or pass fakes directly."""

    config = providers.Configuration()
    clock = providers.Singleton(SystemClock)
    command_runner = providers.Singleton(SubprocessCommandRunner)
    # Extra lint rules for `orchestra compile` (agent, model and tool resolution are added here later).
    compile_rules = providers.List()
