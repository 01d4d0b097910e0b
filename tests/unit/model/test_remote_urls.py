"""Remote URLs lose their secrets before anything shows or stores them."""

from __future__ import annotations

import pytest

from orchestra_core.model.remote_urls import redact_text, redact_url
from orchestra_core.model.workspace_events import PushFailed, RemotePushed, RepoCloned, RepoFetched


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://bob:s3cret@host/r.git", "https://bob:***@host/r.git"),
        ("https://bob:p@ss:w@host/r.git", "https://bob:***@host/r.git"),
        ("https://ghp_token@github.com/o/r.git", "https://***@github.com/o/r.git"),
        ("ssh://git@host/r.git", "ssh://git@host/r.git"),
        ("git@host:r.git", "git@host:r.git"),
        ("file:///srv/git/r.git", "file:///srv/git/r.git"),
        ("/srv/git/r.git", "/srv/git/r.git"),
    ],
)
def test_redact_url_strips_only_the_secret(url: str, shown: str) -> None:
    assert redact_url(url) == shown


def test_redact_text_finds_urls_inside_git_messages() -> None:
    text = "fatal: unable to access 'https://bob:s3cret@host/r.git/': 403\nalso http://a:b@c/d"
    assert "s3cret" not in redact_text(text)
    assert ":b@" not in redact_text(text)
    assert "https://bob:***@host/r.git/" in redact_text(text, "https://bob:s3cret@host/r.git")


def test_remote_events_redact_whatever_they_are_given() -> None:
    url = "https://bob:s3cret@host/r.git"
    events = [
        RepoCloned(repo="r", url=url, path="/w/r"),
        RepoFetched(repo="r", url=url),
        RemotePushed(repo="r", branch="b", sha="1", remote_url=url),
        PushFailed(repo="r", branch="b", sha="1", reason=f"fatal: could not read from {url}"),
    ]
    assert all("s3cret" not in repr(event) for event in events)
    assert events[3].level == "warning"
