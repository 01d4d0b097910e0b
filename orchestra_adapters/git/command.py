"""Runs git: a fixed, prompt-free environment, no pager, hooks off, failures turned into GitError."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Collection, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

from orchestra_core.ports.git import GitError, Identity

# Variables that would point git at another repository, index or object store than the one we name.
_REDIRECTING_VARIABLES = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
)
_FIXED_VARIABLES = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_PAGER": "cat",
    "PAGER": "cat",
    "GIT_EDITOR": "true",
    "GIT_LITERAL_PATHSPECS": "1",  # paths come from agents' tools: `:(glob)` or `*` must mean themselves
    "LC_ALL": "C",
    "LANG": "C",
    "LANGUAGE": "",
}
_HOOKS_OFF = ("-c", f"core.hooksPath={os.devnull}")
_QUIET_CONFIG = ("-c", "color.ui=false", "-c", "gc.auto=0", "-c", "maintenance.auto=false")


def git_environment(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment every git call runs with: `base` (default: ours) minus redirections, plus fixed values."""
    env = {key: value for key, value in (base if base is not None else os.environ).items()}
    for key in _REDIRECTING_VARIABLES:
        env.pop(key, None)
    env.update(_FIXED_VARIABLES)
    return env


def identity_environment(author: Identity, committer: Identity) -> dict[str, str]:
    """GIT_AUTHOR_* and GIT_COMMITTER_* for a commit (dates only when given)."""
    env = {
        "GIT_AUTHOR_NAME": author.name,
        "GIT_AUTHOR_EMAIL": author.email,
        "GIT_COMMITTER_NAME": committer.name,
        "GIT_COMMITTER_EMAIL": committer.email,
    }
    if author.when is not None:
        env["GIT_AUTHOR_DATE"] = git_date(author.when)
    if committer.when is not None:
        env["GIT_COMMITTER_DATE"] = git_date(committer.when)
    return env


def git_date(when: datetime) -> str:
    """`@<epoch> <offset>`, git's raw date form, exact to the second and keeping the time zone."""
    aware = when if when.tzinfo is not None else when.replace(tzinfo=UTC)
    offset = aware.utcoffset()
    minutes = int(offset.total_seconds() // 60) if offset is not None else 0
    sign = "-" if minutes < 0 else "+"
    return f"@{int(aware.timestamp())} {sign}{abs(minutes) // 60:02d}{abs(minutes) % 60:02d}"


class GitCommand:
    """Launches git processes; one instance is shared by everything in an adapter."""

    def __init__(self, executable: str = "git", base_env: Mapping[str, str] | None = None) -> None:
        self._executable = executable
        self._env = git_environment(base_env)

    def run(
        self,
        cwd: Path,
        args: Sequence[str],
        *,
        stdin: bytes | None = None,
        env: Mapping[str, str] | None = None,
        ok_codes: Collection[int] = (0,),
        hooks: bool = False,
    ) -> subprocess.CompletedProcess[bytes]:
        """Run `git <args>` in `cwd` and return the finished process.

        Raises:
            GitError: git exited with a code outside `ok_codes`, or could not be started.
        """
        argv = [self._executable, "--no-pager", *_QUIET_CONFIG, *(() if hooks else _HOOKS_OFF), *args]
        merged = {**self._env, **env} if env else self._env
        try:
            process = subprocess.run(
                argv,
                cwd=cwd,
                input=stdin,
                stdin=None if stdin is not None else subprocess.DEVNULL,
                capture_output=True,
                env=merged,
                check=False,
            )
        except (FileNotFoundError, NotADirectoryError, PermissionError) as error:
            raise GitError(cwd, args, str(error)) from error
        if process.returncode not in ok_codes:
            raise GitError(cwd, args, process.stderr.decode("utf-8", "replace"), process.returncode)
        return process

    def text(
        self,
        cwd: Path,
        args: Sequence[str],
        *,
        stdin: bytes | None = None,
        env: Mapping[str, str] | None = None,
    ) -> str:
        """Run git and return its standard output as text without the final newline."""
        return decode(self.run(cwd, args, stdin=stdin, env=env).stdout).rstrip("\n")


def decode(raw: bytes) -> str:
    """Git output (paths are bytes) as text; undecodable bytes survive as surrogate escapes."""
    return raw.decode("utf-8", "surrogateescape")


def encode(text: str) -> bytes:
    """The inverse of `decode`, for paths handed back to git."""
    return text.encode("utf-8", "surrogateescape")
