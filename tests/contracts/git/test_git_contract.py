"""The Git contract run against SubprocessGit (real temporary repositories) and the in-memory fake."""

from __future__ import annotations

import stat
from collections.abc import Mapping
from pathlib import Path

from orchestra_adapters.git import SubprocessGit
from orchestra_core.testing.contracts.git import GitContract
from orchestra_core.testing.git import InMemoryGit
from tests.support.git_repos import make_repo


class TestSubprocessGit(GitContract):
    capabilities = frozenset({"hooks"})

    def make_git(self) -> SubprocessGit:
        return SubprocessGit()

    def make_repository(self, path: Path, files: Mapping[str, str], branch: str = "main") -> Path:
        return make_repo(path, files, branch=branch).path

    def install_hook(self, repo: Path, name: str, body: str) -> Path:
        marker = repo.parent / f"{name}.ran"
        hook = repo / ".git" / "hooks" / name
        hook.parent.mkdir(parents=True, exist_ok=True)
        hook.write_text(f'#!/bin/sh\ntouch "{marker}"\n{body}\n')
        hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
        return marker


class TestInMemoryGit(GitContract):
    def make_git(self) -> InMemoryGit:
        return InMemoryGit()

    def make_repository(self, path: Path, files: Mapping[str, str], branch: str = "main") -> Path:
        assert isinstance(self.git, InMemoryGit)
        return self.git.init_repository(path, files, branch=branch)
