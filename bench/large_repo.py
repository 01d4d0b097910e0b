"""The generated repository the git benches share: 20,000 small files in 2,000 directories, one commit,
built by plain git with a fixed identity and no global or system configuration."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

FILES = 20_000
ENV = {
    **os.environ,
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "Bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "Bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
}


def git(cwd: Path, *args: str) -> str:
    """Run git in `cwd` with the bench environment; its stdout (raises on failure)."""
    return subprocess.run(["git", *args], cwd=cwd, env=ENV, check=True, capture_output=True, text=True).stdout


def file_path(number: int) -> str:
    """The repo-relative path of generated file `number`."""
    return f"pkg{number % 100:02d}/mod{number // 100 % 20:02d}/file{number}.py"


def generate_repo(root: Path, files: int = FILES) -> Path:
    """A repository at `root/repo` with `files` generated files committed on `main`."""
    repo = root / "repo"
    repo.mkdir()
    git(repo, "init", "--quiet", "-b", "main")
    for number in range(files):
        path = repo / file_path(number)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"VALUE = {number}\n" * 5)
    git(repo, "add", "-A")
    git(repo, "commit", "--quiet", "-m", "generated")
    return repo
