"""Runs git: a fixed, prompt-free environment, no pager, hooks off, hardened against a hostile repository
config, failures turned into GitError."""

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
# Settings that name a program git would run, pinned on every call: the repository's own config is written
# where agents work, and must not choose what runs (docs/git.md, "Hardening").
_HARDENED_CONFIG = (
    "-c", "core.fsmonitor=false",  # a hook command run by status, diff, add, commit, ... (the GitSpawn attack)
    "-c", "log.showSignature=false",  # `git log` would run gpg.program to verify signatures
    "-c", "protocol.allow=never",  # no transport: ssh commands, credential helpers and remote helpers never start
)
# Filter drivers (`filter.<name>.clean|smudge|process`) are chosen by .gitattributes (agents write those) and
# run on add, hash-object, status, checkout; their names cannot be pinned in advance, so each call that may run
# one first lists the drivers defined in config and overrides those the repository's config defines.
# Merge drivers (`merge.<name>.driver`, chosen by `merge=` attributes) run on merges (`merge-tree`) the same way;
# one the repository's config defines becomes `false` instead: the file then counts as conflicted.
_DRIVER_KEYS = r"^(filter\..+\.(clean|smudge|process)|merge\..+\.driver)$"
_NO_MERGE_DRIVER = "false"
_TRUSTED_SCOPES = frozenset({"system", "global", "command"})  # the user's own config, and the command line
# Commands that never run a filter driver (no file content goes through .gitattributes): no lookup needed.
_DRIVERLESS = frozenset(
    {
        "rev-parse", "symbolic-ref", "for-each-ref", "check-ref-format", "update-ref", "config", "mktree",
        "commit-tree", "ls-tree", "check-ignore", "interpret-trailers", "log", "version",
    }
)
_DRIVERLESS_WORKTREE = frozenset({"list", "prune", "remove"})
_CONTENT_OPTIONS = frozenset({"--filters", "--textconv"})  # cat-file with these does run drivers


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
        work_tree: bool = False,
        objects_only: bool = False,
    ) -> subprocess.CompletedProcess[bytes]:
        """Run `git <args>` in `cwd` and return the finished process.

        Every call is hardened (see `_HARDENED_CONFIG`); filter drivers the repository's config defines are
        overridden when the command may run one. `hooks` lets the repository's hooks run (`commit` with
        `run_hooks`), from `hooks_path`; `work_tree` pins the work tree to `cwd`, whatever `core.worktree` says.
        `objects_only` says that this command reads no worktree file and merges nothing (a diff of two trees,
        index entries given by object id), so no driver can run: the lookup, a process, is skipped.

        Raises:
            GitError: git exited with a code outside `ok_codes`, or could not be started.
        """
        merged = {**self._env, **env} if env else dict(self._env)
        if work_tree:
            merged["GIT_WORK_TREE"] = str(cwd)
        if not objects_only and _may_run_drivers(args):
            merged.update(_config_environment(merged, self.driver_overrides(cwd, merged)))
        hooks_config = ("-c", f"core.hooksPath={self.hooks_path(cwd, merged)}") if hooks else _HOOKS_OFF
        argv = [self._executable, "--no-pager", *_QUIET_CONFIG, *_HARDENED_CONFIG, *hooks_config]
        return self._spawn(cwd, [*argv, *args], args, stdin, merged, ok_codes)

    def popen(self, cwd: Path, args: Sequence[str]) -> subprocess.Popen[bytes]:
        """Start `git <args>` in `cwd`, hardened and hooks off as `run`, with pipes for stdin and stdout (a
        long-lived reader such as `cat-file --batch`; `args` must not run filter or merge drivers).

        Raises:
            GitError: git could not be started.
        """
        argv = [self._executable, "--no-pager", *_QUIET_CONFIG, *_HARDENED_CONFIG, *_HOOKS_OFF, *args]
        try:
            return subprocess.Popen(
                argv, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=self._env
            )
        except (FileNotFoundError, NotADirectoryError, PermissionError) as error:
            raise GitError(cwd, args, str(error)) from error

    def driver_overrides(self, cwd: Path, env: Mapping[str, str] | None = None) -> dict[str, str]:
        """`filter.<name>.clean|smudge|process` and `merge.<name>.driver` keys set by the repository's config
        (local, worktree, and what they include), each mapped to the value the user's own config gives it, else
        "" for a filter (git then runs nothing; a driver marked `required` then fails the command instead of
        being skipped) and `false` for a merge driver (the merge reports the file as conflicted)."""
        trusted: dict[str, str] = {}
        untrusted: set[str] = set()
        for scope, key, value in self._config_entries(cwd, env, _DRIVER_KEYS):
            if scope in _TRUSTED_SCOPES:
                trusted[key] = value
            else:
                untrusted.add(key)
        return {key: trusted.get(key, _neutral(key)) for key in sorted(untrusted)}

    def hooks_path(self, cwd: Path, env: Mapping[str, str] | None = None) -> str:
        """The hooks directory of a commit that runs hooks: `core.hooksPath` as the user's own config sets it,
        else `hooks` in the repository's git dir; never a directory the repository's config names (it may point
        into the worktree, where agents write)."""
        entries = self._config_entries(cwd, env, r"^core\.hookspath$")
        trusted = [value for scope, _, value in entries if scope in _TRUSTED_SCOPES]
        if trusted:
            return trusted[-1]
        args = ["rev-parse", "--path-format=absolute", "--git-common-dir"]
        process = self._spawn(cwd, [*self._plain_argv(), *args], args, None, dict(env or self._env), (0,))
        return str(Path(decode(process.stdout).rstrip("\n")) / "hooks")

    def _config_entries(
        self, cwd: Path, env: Mapping[str, str] | None, pattern: str
    ) -> list[tuple[str, str, str]]:
        """(scope, key, value) of every config entry whose key matches `pattern`, in git's order."""
        args = ["config", "--null", "--show-scope", "--get-regexp", pattern]
        process = self._spawn(cwd, [*self._plain_argv(), *args], args, None, dict(env or self._env), (0, 1))
        return _scoped_entries(process.stdout)

    def _plain_argv(self) -> list[str]:
        """git for reading config and paths: hardened, and without our own `core.hooksPath` (which `git config`
        would list as set on the command line; these commands run no hook)."""
        return [self._executable, "--no-pager", *_QUIET_CONFIG, *_HARDENED_CONFIG]

    def _spawn(
        self,
        cwd: Path,
        argv: list[str],
        args: Sequence[str],
        stdin: bytes | None,
        env: Mapping[str, str],
        ok_codes: Collection[int],
    ) -> subprocess.CompletedProcess[bytes]:
        try:
            process = subprocess.run(
                argv,
                cwd=cwd,
                input=stdin,
                stdin=None if stdin is not None else subprocess.DEVNULL,
                capture_output=True,
                env=env,
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


def _neutral(key: str) -> str:
    """What an untrusted driver key becomes: no filter, or a merge driver that reports a conflict."""
    return _NO_MERGE_DRIVER if key.startswith("merge.") else ""


def _may_run_drivers(args: Sequence[str]) -> bool:
    """Whether git with `args` may pass file content through a filter driver."""
    words = _command_words(args)
    if not words:
        return False
    if words[0] == "worktree":
        return len(words) < 2 or words[1] not in _DRIVERLESS_WORKTREE
    if words[0] == "cat-file":
        return any(arg in _CONTENT_OPTIONS for arg in args)
    if words[0] == "hash-object" and "--no-filters" in words:
        return False
    return words[0] not in _DRIVERLESS


def _command_words(args: Sequence[str]) -> list[str]:
    """The subcommand and what follows it, without the global options (`-c key=value`, `--flag`) before it."""
    position = 0
    while position < len(args) and args[position].startswith("-"):
        position += 2 if args[position] in ("-c", "-C") else 1
    return list(args[position:])


def _scoped_entries(raw: bytes) -> list[tuple[str, str, str]]:
    """`git config --null --show-scope --get-regexp` output as (scope, key, value) triples."""
    fields = raw.split(b"\0")
    entries = []
    for scope, pair in zip(fields[0::2], fields[1::2], strict=False):
        key, _, value = pair.partition(b"\n")
        entries.append((decode(scope), decode(key), decode(value)))
    return entries


def _config_environment(env: Mapping[str, str], overrides: Mapping[str, str]) -> dict[str, str]:
    """`overrides` as GIT_CONFIG_KEY_<n>/GIT_CONFIG_VALUE_<n> after those already in `env`. Unlike `-c`,
    which splits at the first `=`, these keep a driver name holding `=` intact."""
    if not overrides:
        return {}
    start = int(env.get("GIT_CONFIG_COUNT", "0") or "0")
    added: dict[str, str] = {}
    for number, (key, value) in enumerate(overrides.items(), start):
        added[f"GIT_CONFIG_KEY_{number}"] = key
        added[f"GIT_CONFIG_VALUE_{number}"] = value
    added["GIT_CONFIG_COUNT"] = str(start + len(overrides))
    return added


def decode(raw: bytes) -> str:
    """Git output (paths are bytes) as text; undecodable bytes survive as surrogate escapes."""
    return raw.decode("utf-8", "surrogateescape")


def encode(text: str) -> bytes:
    """The inverse of `decode`, for paths handed back to git."""
    return text.encode("utf-8", "surrogateescape")
