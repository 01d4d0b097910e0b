"""Real temporary git repositories for tests: `git init -b main`, explicit identity, no global config."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

IDENTITY = {
    "GIT_AUTHOR_NAME": "Repo Builder",
    "GIT_AUTHOR_EMAIL": "builder@example.com",
    "GIT_COMMITTER_NAME": "Repo Builder",
    "GIT_COMMITTER_EMAIL": "builder@example.com",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(cwd: Path, *args: str, stdin: str | None = None) -> str:
    """Run git in `cwd` with a fixed identity and no global config; return stdout (raises on failure)."""
    env = {**os.environ, **IDENTITY}
    for key in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        env.pop(key, None)
    process = subprocess.run(
        ["git", *args], cwd=cwd, env=env, input=stdin, capture_output=True, text=True, check=False
    )
    if process.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed in {cwd}: {process.stderr}")
    return process.stdout


class GitRepo:
    """A test repository with helpers to write files, commit and inspect."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def git(self, *args: str, stdin: str | None = None) -> str:
        return git(self.path, *args, stdin=stdin)

    def write(self, relative: str, text: str = "", *, root: Path | None = None) -> Path:
        file = (root or self.path) / relative
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(text, encoding="utf-8")
        return file

    def commit_all(self, message: str = "commit") -> str:
        self.git("add", "-A")
        self.git("commit", "--quiet", "--allow-empty", "-m", message)
        return self.head()

    def head(self, rev: str = "HEAD") -> str:
        return self.git("rev-parse", rev).strip()

    def branches(self) -> list[str]:
        return self.git("for-each-ref", "--format=%(refname:lstrip=2)", "refs/heads/").split()

    def status(self, cwd: Path | None = None) -> str:
        return git(cwd or self.path, "status", "--porcelain=v1", "--untracked-files=all")

    def files_in(self, rev: str) -> list[str]:
        return self.git("ls-tree", "-r", "--name-only", rev).split("\n")[:-1]

    def show(self, rev: str, path: str) -> str:
        return self.git("show", f"{rev}:{path}")

    def log(self, rev: str, fmt: str = "%H") -> list[str]:
        return [line for line in self.git("log", f"--format={fmt}", rev, "--").split("\n") if line]


def make_repo(path: Path, files: Mapping[str, str] | None = None, *, branch: str = "main") -> GitRepo:
    """A repository at `path` with `files` committed on `branch` (default: one README)."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "--quiet", "-b", branch)
    repo = GitRepo(path)
    for relative, text in (files if files is not None else {"README.md": "hello\n"}).items():
        repo.write(relative, text)
    if files is None or files:
        repo.commit_all("initial")
    return repo
