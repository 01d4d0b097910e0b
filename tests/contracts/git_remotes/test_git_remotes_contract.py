"""The GitRemotes contract run against the in-memory fake and the git executable on local bare repos."""

from __future__ import annotations

from pathlib import Path

from orchestra_adapters.git.remotes import SubprocessGitRemotes
from orchestra_core.testing.contracts.git_remotes import SECRET, GitRemotesContract
from orchestra_core.testing.git_remotes import InMemoryGitRemotes
from tests.support.git_remote_repos import bare_remote, commit_file


class TestInMemoryGitRemotes(GitRemotesContract):
    def make_remotes(self) -> InMemoryGitRemotes:
        return InMemoryGitRemotes()

    def make_remote(self) -> str:
        assert isinstance(self.remotes, InMemoryGitRemotes)
        self.count = getattr(self, "count", 0) + 1
        return self.remotes.add_remote(f"https://git.example/{self.count}.git")

    def missing_url(self) -> str:
        return f"https://bob:{SECRET}@git.example/missing.git"

    def commit(self, repo: Path) -> str:
        assert isinstance(self.remotes, InMemoryGitRemotes)
        return self.remotes.commit(repo)


class TestSubprocessGitRemotes(GitRemotesContract):
    def make_remotes(self) -> SubprocessGitRemotes:
        return SubprocessGitRemotes(timeout_s=120)

    def make_remote(self) -> str:
        return bare_remote(self.tmp / f"remote-{len(list(self.tmp.glob('remote-*')))}.git").as_uri()

    def missing_url(self) -> str:
        # A password in a file URL is meaningless to git but must still never be shown.
        return f"file://bob:{SECRET}@localhost{self.tmp}/missing.git"

    def commit(self, repo: Path) -> str:
        return commit_file(repo, "work.txt", f"{len(list(repo.iterdir()))}\n")
