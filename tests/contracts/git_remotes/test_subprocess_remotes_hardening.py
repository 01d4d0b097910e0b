"""SubprocessGitRemotes' own hardening: no command-running transport, no prompt, batch ssh unless the user
chose an ssh command."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestra_adapters.git.remotes import SubprocessGitRemotes, remote_environment
from orchestra_core.ports.git_remotes import RemoteError


@pytest.mark.parametrize("url", ["ext::sh -c touch% {marker}", "fd::3"])
def test_transports_that_run_commands_are_refused(tmp_path: Path, url: str) -> None:
    marker = tmp_path / "ran"
    with pytest.raises(RemoteError) as caught:
        SubprocessGitRemotes(timeout_s=60).clone(url.format(marker=marker), tmp_path / "clone")
    assert not marker.exists()
    assert "not allowed" in caught.value.detail or "unsupported" in caught.value.detail.lower()


def test_the_environment_never_prompts() -> None:
    env = remote_environment({"PATH": "/usr/bin", "SSH_ASKPASS": "/usr/bin/ssh-askpass"})
    assert env["GIT_TERMINAL_PROMPT"] == "0"
    assert env["SSH_ASKPASS_REQUIRE"] == "never" and "SSH_ASKPASS" not in env
    assert env["GIT_SSH_COMMAND"] == "ssh -o BatchMode=yes"


def test_the_users_own_ssh_command_is_kept() -> None:
    assert remote_environment({"GIT_SSH_COMMAND": "ssh -i key"})["GIT_SSH_COMMAND"] == "ssh -i key"
    assert "GIT_SSH_COMMAND" not in remote_environment({"GIT_SSH": "/usr/bin/my-ssh"})
    assert remote_environment({}, "ssh -F cfg")["GIT_SSH_COMMAND"] == "ssh -F cfg"


def test_a_hung_remote_is_stopped_by_the_timeout(tmp_path: Path) -> None:
    # An ssh "remote" whose ssh command never answers: the timeout kills it, and the failure is a network one.
    hang = tmp_path / "hang.sh"
    hang.write_text("#!/bin/sh\nexec sleep 600\n", encoding="utf-8")
    hang.chmod(0o755)
    remotes = SubprocessGitRemotes(base_env={"PATH": "/usr/bin:/bin", "GIT_SSH_COMMAND": str(hang)}, timeout_s=1)
    with pytest.raises(RemoteError) as caught:
        remotes.remote_head("ssh://git@example.invalid/r.git", "main")
    assert caught.value.category == "network" and "timed out" in caught.value.detail
