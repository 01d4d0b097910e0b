"""Fixtures for workspace tests: a project directory, repos in it, and a manager recording its events."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from attrs import define, field

from orchestra_adapters.git import SubprocessGit
from orchestra_core.model.settings import RepoSettings, WorkspaceSettings
from orchestra_core.model.turn import AgentTurn
from orchestra_core.ports.commit_messages import CommitMessageGenerator
from orchestra_core.ports.git import Git
from orchestra_core.testing.clock import ManualClock
from orchestra_core.testing.commit_messages import ScriptedCommitMessages
from orchestra_core.workspace import WorkspaceManager
from tests.support.git_repos import GitRepo, make_repo

SESSION_ID = "3f2a9c1e-7b4d-4e21-9a0b-5c6d7e8f9a01"


@define
class Harness:
    """A project root with its repos; `manager()` builds a WorkspaceManager whose events land in `events`."""

    root: Path
    repos: dict[str, GitRepo] = field(factory=dict)
    events: list[Any] = field(factory=list)
    generator: ScriptedCommitMessages | None = None

    def repo(self, name: str, files: Mapping[str, str] | None = None, *, inside: bool = False) -> GitRepo:
        path = self.root / name if inside else self.root.parent / "repos" / name
        self.repos[name] = make_repo(path, files)
        return self.repos[name]

    def manager(
        self,
        settings: Mapping[str, RepoSettings] | None = None,
        generator: CommitMessageGenerator | None = None,
        git: Git | None = None,
        **repo_options: Any,
    ) -> WorkspaceManager:
        if settings is None:
            settings = {
                name: RepoSettings(path=str(r.path), **repo_options) for name, r in self.repos.items()
            }
        return WorkspaceManager(
            WorkspaceSettings(repos=settings),
            git or SubprocessGit(),
            ManualClock(),
            self.root,
            commit_messages=generator,
            on_event=self.events.append,
        )

    def events_of(self, kind: type) -> list[Any]:
        return [event for event in self.events if isinstance(event, kind)]


@pytest.fixture
def harness(tmp_path: Path) -> Harness:
    root = tmp_path / "project"
    root.mkdir()
    return Harness(root)


def make_turn(
    writes: Sequence[str] = (),
    *,
    node: str = "code",
    number: int = 1,
    intent: str = "I will add the greeting module.",
    model: str = "claude-test",
    provider: str = "anthropic",
) -> AgentTurn:
    return AgentTurn(
        node_id=node,
        turn_number=number,
        model=model,
        provider=provider,
        messages=({"role": "user", "content": "task"}, {"role": "assistant", "content": intent}),
        files_written=tuple(writes),
    )


TurnFactory = Callable[..., AgentTurn]


@pytest.fixture
def turn() -> TurnFactory:
    return make_turn
