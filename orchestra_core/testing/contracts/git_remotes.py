"""The GitRemotes contract: clone, fetch, push with a lease, classified failures, no secret in any error."""

from __future__ import annotations

from pathlib import Path

from orchestra_core.ports.git_remotes import GitRemotes, RemoteError
from orchestra_core.testing.contracts._base import PortContract, cases, raises

SECRET = "s3cr3t-token"


class GitRemotesContract(PortContract):
    """Behaviour every GitRemotes implementation shares.

    A runner implements `make_remotes()` (the adapter), `make_remote()` (a new remote with a `main` branch:
    its URL, usable by the adapter), `missing_url()` (a URL with no repository behind it; it may carry a
    password) and `commit(repo)` (a new commit in a clone the adapter made; its SHA).
    """

    remotes: GitRemotes

    def make_remotes(self) -> GitRemotes:
        raise NotImplementedError

    def make_remote(self) -> str:
        raise NotImplementedError

    def missing_url(self) -> str:
        raise NotImplementedError

    def commit(self, repo: Path) -> str:
        raise NotImplementedError

    def setup_method(self, method: object = None) -> None:
        super().setup_method(method)
        self.remotes = self.make_remotes()

    def _clone(self, url: str, depth: int | None = None) -> Path:
        path = self.tmp / f"clone-{len(list(self.tmp.glob('clone-*')))}"
        self.remotes.clone(url, path, depth=depth)
        return path

    def test_clone_creates_the_directory_and_sees_the_remote_branch(self) -> None:
        url = self.make_remote()
        path = self._clone(url)
        assert path.is_dir()
        assert self.remotes.remote_head(url, "main") is not None
        assert self.remotes.remote_head(url, "no-such-branch") is None

    def test_a_push_with_an_empty_lease_creates_the_branch(self) -> None:
        url = self.make_remote()
        path = self._clone(url, depth=1)
        sha = self.commit(path)
        self.remotes.push(path, url, sha, "orchestra/p/1", expected_remote_sha="")
        assert self.remotes.remote_head(url, "orchestra/p/1") == sha

    def test_a_push_against_the_right_lease_moves_the_branch_and_a_stale_one_is_rejected(self) -> None:
        url = self.make_remote()
        path = self._clone(url)
        first = self.commit(path)
        self.remotes.push(path, url, first, "orchestra/p/1", expected_remote_sha="")
        second = self.commit(path)
        self.remotes.push(path, url, second, "orchestra/p/1", expected_remote_sha=first)
        with raises(RemoteError) as caught:
            self.remotes.push(path, url, first, "orchestra/p/1", expected_remote_sha=first)
        assert caught.value.category == "rejected"
        with raises(RemoteError) as again:
            self.remotes.push(path, url, first, "orchestra/p/1", expected_remote_sha="")
        assert again.value.category == "rejected"
        assert self.remotes.remote_head(url, "orchestra/p/1") == second

    def test_fetch_branch_returns_the_remote_sha_or_none(self) -> None:
        url = self.make_remote()
        writer = self._clone(url)
        sha = self.commit(writer)
        self.remotes.push(writer, url, sha, "orchestra/p/2", expected_remote_sha="")
        reader = self._clone(url, depth=1)
        assert self.remotes.fetch_branch(reader, url, "orchestra/p/2") == sha
        assert self.remotes.fetch_branch(reader, url, "orchestra/p/absent") is None
        self.remotes.fetch(reader, url, ["+refs/heads/*:refs/remotes/origin/*"])
        self.remotes.deepen(reader, url)

    def test_an_unreachable_remote_is_not_found_and_its_password_is_never_shown(self) -> None:
        url = self.missing_url()
        with raises(RemoteError) as caught:
            self.remotes.clone(url, self.tmp / "nowhere")
        assert caught.value.category == "not_found"
        assert SECRET not in str(caught.value) and SECRET not in caught.value.detail
        assert SECRET not in caught.value.url
        with raises(RemoteError) as listing:
            self.remotes.remote_refs(url)
        assert listing.value.category == "not_found" and SECRET not in str(listing.value)
        assert not (self.tmp / "nowhere").exists()

    def test_remote_refs_lists_the_branches_and_what_head_names_without_fetching(self) -> None:
        url = self.make_remote()
        writer = self._clone(url)
        sha = self.commit(writer)
        self.remotes.push(writer, url, sha, "feature/x", expected_remote_sha="")
        refs = self.remotes.remote_refs(url)
        main = self.remotes.remote_head(url, "main")
        assert refs.head_branch == "main" and refs.head_sha == main
        assert refs.refs["refs/heads/main"] == main and refs.refs["refs/heads/feature/x"] == sha
        assert refs.branches() == ["feature/x", "main"]
        with raises(ValueError):
            self.remotes.remote_refs("--upload-pack=touch x")

    @cases(url=("url",), branch=("branch",))
    def test_arguments_that_look_like_options_are_refused(self, which: str) -> None:
        url = self.make_remote()
        path = self._clone(url)
        sha = self.commit(path)
        bad_url, bad_branch = ("--upload-pack=touch x", "b") if which == "url" else (url, "--delete")
        with raises(ValueError):
            self.remotes.push(path, bad_url, sha, bad_branch, expected_remote_sha="")
        with raises(ValueError):
            self.remotes.clone("-oProxyCommand=x", self.tmp / "x")
        assert not (self.tmp / "x").exists()
