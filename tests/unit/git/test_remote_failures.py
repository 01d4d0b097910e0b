"""classify_remote_failure sorts git's messages into the categories PushFailed reports."""

from __future__ import annotations

import pytest

from orchestra_core.ports.git_remotes import check_remote_argument, classify_remote_failure


@pytest.mark.parametrize(
    ("stderr", "category"),
    [
        ("fatal: Authentication failed for 'https://h/r.git/'", "auth"),
        ("fatal: could not read Username for 'https://h': terminal prompts disabled", "auth"),
        ("git@h: Permission denied (publickey).\nfatal: Could not read from remote repository.", "auth"),
        (" ! [remote rejected] b -> b (pre-receive hook declined)\nerror: failed to push some refs", "rejected"),
        (" ! [rejected]        b -> b (stale info)", "rejected"),
        ("fatal: '/srv/x.git' does not appear to be a git repository", "not_found"),
        ("remote: Repository not found.\nfatal: repository 'https://h/x.git/' not found", "not_found"),
        ("fatal: couldn't find remote ref refs/heads/b", "not_found"),
        ("fatal: unable to access 'https://h/': Could not resolve host: h", "network"),
        ("ssh: connect to host h port 22: Connection refused", "network"),
        ("fatal: something else entirely", "other"),
    ],
)
def test_git_messages_are_classified(stderr: str, category: str) -> None:
    assert classify_remote_failure(stderr) == category


@pytest.mark.parametrize("value", ["", "-", "--upload-pack=x", "-oProxyCommand=x"])
def test_option_like_arguments_are_refused(value: str) -> None:
    with pytest.raises(ValueError, match="not allowed"):
        check_remote_argument(value, "remote URL")
