"""`orchestra doctor`'s check of a repo not cloned yet does not wait for a remote that never answers: the ssh
command hangs, the check's timeout kills it, and the line is an error naming the repo and its remote."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from orchestra_adapters.container import build_container
from orchestra_cli import doctor_repos
from orchestra_cli.doctor_check import ERROR


def test_a_hung_remote_is_an_error_after_the_checks_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hang = tmp_path / "hang.sh"
    hang.write_text("#!/bin/sh\nexec sleep 600\n", encoding="utf-8")
    hang.chmod(0o755)
    monkeypatch.setenv("GIT_SSH_COMMAND", str(hang))
    monkeypatch.setattr(doctor_repos, "REMOTE_TIMEOUT_S", 1.0)
    url = "ssh://git@example.invalid/backend.git"
    (tmp_path / "orchestra.yaml").write_text(
        f"workspace:\n  repos:\n    backend:\n      path: backend\n      remote: {url}\n", encoding="utf-8"
    )
    started = time.monotonic()
    [check] = doctor_repos.repo_checks(build_container(cwd=tmp_path), git_found=True)
    assert time.monotonic() - started < 10
    assert (check.name, check.status) == ("repo backend", ERROR)
    assert check.detail.startswith(
        f"workspace.repos.backend.remote: {tmp_path / 'backend'} is not cloned yet and its remote {url} cannot be reached: "
    )
    assert "timed out after 1 s" in check.detail and not (tmp_path / "backend").exists()
