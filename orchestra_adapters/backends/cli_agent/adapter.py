"""What differs from one CLI agent to another: its command line, its environment, the format of its stream."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Protocol

from attrs import frozen

from orchestra_adapters.backends.cli_agent.events import AgentEvent
from orchestra_adapters.backends.cli_agent.spec import CliAgentSpec


class StreamParser(Protocol):
    """Turns the agent's stdout, one line at a time, into events (it may keep state between lines)."""

    def parse(self, line: str) -> Iterator[AgentEvent]:
        """The events one line of output carries (none for lines it does not know)."""
        ...


class CliAgentAdapter(Protocol):
    """Maps a CliAgentSpec to one CLI agent's flags and reads its output stream."""

    @property
    def name(self) -> str:
        """The backend name (`claude-code`)."""
        ...

    @property
    def default_command(self) -> str:
        """The executable looked up on PATH when orchestra.yaml names none (`claude`)."""
        ...

    @property
    def provider(self) -> str:
        """The provider recorded in agent turns and commit trailers (`anthropic`)."""
        ...

    @property
    def resumes_sessions(self) -> bool:
        """Whether `spec.resume_session` continues the CLI's own recorded session (Claude Code: `--resume`)."""
        ...

    def command(self, spec: CliAgentSpec, workdir: Path) -> list[str]:
        """The full command line; configuration files it needs are written into `workdir` (private).

        The prompt is given on stdin.
        """
        ...

    def environment(self, spec: CliAgentSpec) -> Mapping[str, str]:
        """Variables the agent needs on top of the inherited environment and `spec.env`."""
        ...

    def parser(self) -> StreamParser:
        """A fresh parser for one run's output."""
        ...

    def state_paths(self, env: Mapping[str, str]) -> AgentStatePaths:
        """Where the CLI keeps its own state (sessions, settings, credentials) for the environment `env` it
        runs with: kept writable inside the sandbox."""
        ...


@frozen
class AgentStatePaths:
    """A CLI agent's own state: directories (created when missing) and files (used when they exist)."""

    directories: tuple[Path, ...] = ()
    files: tuple[Path, ...] = ()


def home(env: Mapping[str, str]) -> Path:
    """The home directory of an agent's environment."""
    return Path(env.get("HOME") or Path.home())
