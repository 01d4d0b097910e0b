"""BubblewrapCommandRunner: shell commands in a bubblewrap (`bwrap`) sandbox, the `sandbox: {kind: bubblewrap}`
of orchestra.yaml.

Inside, the whole filesystem is read-only apart from the directories a call names writable (the session's
worktrees, the stage directory) and the configured extra `writable` paths; `/tmp` is a private tmpfs, `/dev`
a minimal one, `/proc` the sandbox's own. In every writable directory its `.git` (a directory, or the file of
a linked worktree, plus the git directories that file points to), `.orchestra/` and the directories a call
names `protected` (Orchestra's state where it lies inside a worktree) stay read-only. The
network is a private namespace with only loopback, unless `network: true`. Every namespace bubblewrap can
make is unshared (user when allowed, pid, ipc, uts, cgroup) and capabilities are dropped.

How a sandbox ends, by two independent routes: bwrap runs as the leader of the supervised process group
(`orchestra_adapters.process.supervised`), and the sandbox's processes stay in that group, so a timeout, a cancel or
the death of Orchestra SIGKILLs all of them at once; and the pid namespace dies with bwrap, which dies with its
parent (`--die-with-parent`), which reaches a process that left the group. No `--new-session`: it would move the
sandbox out of the group, leaving only the second route, and buys nothing here, since the supervised spawn already
starts a new session without a controlling terminal (nothing inside can push input into the user's terminal).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from orchestra_adapters.process.command_runner import SubprocessCommandRunner
from orchestra_core.model.cancellation import Cancellation
from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.layout import STATE_DIR
from orchestra_core.model.settings import OrchestraSettings
from orchestra_core.ports.command_runner import CommandResult

PROTECTED_NAMES = (".git", STATE_DIR)
NOT_INSTALLED = (
    "orchestra: sandbox.kind is bubblewrap but bwrap is not installed, so the command was not run "
    "(on Debian/Ubuntu: apt-get install bubblewrap; `orchestra doctor` checks the sandbox)"
)
_PROBE_TIMEOUT_S = 10
_VISIBLE, _WRITABLE, _PROTECTED = 0, 1, 2  # mount kinds; for one path the highest wins


def find_bwrap() -> str | None:
    """The `bwrap` program on PATH, or None."""
    return shutil.which("bwrap")


def base_arguments(network: bool) -> list[str]:
    """The namespaces, limits and base mounts of every sandbox (before the per-command mounts)."""
    arguments = ["--die-with-parent", "--unshare-all", "--cap-drop", "ALL"]
    if network:
        arguments.append("--share-net")
    return [*arguments, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]


def bwrap_arguments(
    bwrap: str,
    argv: Sequence[str],
    *,
    cwd: str,
    writable: Sequence[str],
    network: bool = False,
    protected: Sequence[str] = (),
) -> list[str]:
    """The `bwrap` command line that runs `argv` in `cwd`, allowed to write only in `writable` and `/tmp`
    (not in their `.git`, `.orchestra` and the `protected` directories inside them)."""
    return [
        bwrap,
        *base_arguments(network),
        *_mount_arguments(cwd, writable, protected),
        "--setenv", "TMPDIR", "/tmp",
        "--chdir", os.path.abspath(cwd),
        "--",
        *argv,
    ]  # fmt: skip


def _mount_arguments(cwd: str, writable: Sequence[str], protected: Sequence[str] = ()) -> list[str]:
    mounts: dict[str, int] = {}

    def add(path: str, kind: int) -> None:
        mounts[path] = max(kind, mounts.get(path, kind))

    roots = [os.path.realpath(path) for path in writable if os.path.exists(path)]
    for root in roots:
        add(root, _WRITABLE)
        for path in _protected_paths(root):
            add(path, _PROTECTED)
    for path in (os.path.realpath(path) for path in protected if os.path.exists(path)):
        if any(_inside(path, root) and path != root for root in roots):
            add(path, _PROTECTED)
    here = os.path.realpath(cwd)
    if not any(_inside(here, root) for root in roots):
        add(here, _VISIBLE)  # e.g. under the private /tmp: the command must still find its directory
    arguments: list[str] = []
    # Parents before children, so a deeper mount (a .git inside a worktree) is laid over a shallower one.
    for path, kind in sorted(mounts.items(), key=lambda item: (len(Path(item[0]).parts), item[0])):
        arguments += ["--bind" if kind == _WRITABLE else "--ro-bind", path, path]
    return arguments


def _protected_paths(root: str) -> list[str]:
    """What must stay read-only inside a writable directory: its `.git` and `.orchestra`, and for a linked
    worktree (`.git` is a file) the git directory it names and that directory's common directory."""
    found = [
        os.path.join(root, name) for name in PROTECTED_NAMES if os.path.lexists(os.path.join(root, name))
    ]
    dot_git = os.path.join(root, ".git")
    if os.path.isfile(dot_git):
        gitdir = _pointer(dot_git, "gitdir:")
        if gitdir is not None:
            found.append(gitdir)
            common = _pointer(os.path.join(gitdir, "commondir"), "")
            if common is not None:
                found.append(common)
    return [os.path.realpath(path) for path in found if os.path.exists(path)]


def _pointer(file: str, prefix: str) -> str | None:
    """The path a git pointer file names (relative to the file's directory), or None."""
    try:
        text = Path(file).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not text.startswith(prefix):
        return None
    target = text[len(prefix) :].strip()
    return os.path.normpath(os.path.join(os.path.dirname(file), target)) if target else None


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


class BubblewrapCommandRunner(SubprocessCommandRunner):
    """Runs each command in a bubblewrap sandbox (and, like its base, in a process group that dies with it).

    Without `bwrap` (None) nothing runs: every command fails with exit code 127 and says why.

    Args:
        bwrap: The `bwrap` program, or None when it is not installed.
        network: Share the host's network (default: loopback only, in a private namespace).
        writable: Extra paths every command may write (absolute; missing ones are skipped).
        base_env: The environment commands start from (default: this process's).
    """

    def __init__(
        self,
        bwrap: str | None,
        *,
        network: bool = False,
        writable: Sequence[str] = (),
        base_env: dict[str, str] | None = None,
    ) -> None:
        super().__init__(base_env)
        self.bwrap = bwrap
        self.network = network
        self.extra_writable = tuple(writable)

    def run(
        self,
        command: str,
        *,
        cwd: str,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        stdin: str | None = None,
        writable: Sequence[str] = (),
        cancel: Cancellation | None = None,
        protected: Sequence[str] = (),
    ) -> CommandResult:
        if self.bwrap is None:  # fail closed: never run the command unconfined
            return CommandResult(exit_code=127, stdout="", stderr=NOT_INSTALLED + "\n", duration_s=0.0)
        return super().run(
            command, cwd=cwd, env=env, timeout=timeout, stdin=stdin, writable=writable, cancel=cancel,
            protected=protected,
        )  # fmt: skip

    def argv(self, command: str, *, cwd: str, writable: Sequence[str], protected: Sequence[str] = ()) -> list[str]:
        assert self.bwrap is not None
        allowed = [*writable, *self.extra_writable]
        return bwrap_arguments(
            self.bwrap, ["/bin/sh", "-c", command], cwd=cwd, writable=allowed, network=self.network,
            protected=protected,
        )  # fmt: skip


def sandboxed_runner(settings: OrchestraSettings) -> SubprocessCommandRunner:
    """The command runner orchestra.yaml's `sandbox` asks for (building it never fails, so `compile` works
    where bwrap is missing; the commands then fail, saying why)."""
    sandbox = settings.sandbox
    if sandbox.kind == "none":
        return SubprocessCommandRunner()
    writable = [str(settings.resolve_path(path)) for path in sandbox.writable]
    return BubblewrapCommandRunner(find_bwrap(), network=sandbox.network, writable=writable)


class AgentSandbox:
    """Wraps a CLI agent's command line (Claude Code, Codex) in bubblewrap.

    Like a command's sandbox, with three differences the agent needs: the network is the host's (the agent
    talks to its provider), the host's `/tmp` stays visible read-only (the agent, its MCP proxy's interpreter
    and the proxy's socket may live there) with the node's private scratch directory as `TMPDIR`, and the
    agent's own state directories (`~/.claude`, `$CODEX_HOME`) are writable.

    Args:
        bwrap: The `bwrap` program, or None when it is not installed (every wrap then fails: see `wrap`).
        writable: orchestra.yaml's extra `writable` paths.
    """

    def __init__(self, bwrap: str | None, writable: Sequence[str] = ()) -> None:
        self.bwrap = bwrap
        self.extra_writable = tuple(writable)

    def wrap(
        self, argv: Sequence[str], *, cwd: str, writable: Sequence[str], protected: Sequence[str], scratch: str
    ) -> list[str]:
        """`argv` under bubblewrap, allowed to write `writable` (not their `.git`, `.orchestra` and
        `protected`), the extra paths and `scratch`.

        Raises:
            SandboxUnavailable: bwrap is not installed; the agent must not run unconfined.
        """
        if self.bwrap is None:
            raise SandboxUnavailable(NOT_INSTALLED.replace("the command was", "the agent was"))
        allowed = [*writable, *self.extra_writable, scratch]
        return [
            self.bwrap,
            "--die-with-parent", "--unshare-all", "--share-net", "--cap-drop", "ALL",
            "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            *_mount_arguments(cwd, allowed, protected),
            "--setenv", "TMPDIR", scratch,
            "--chdir", os.path.abspath(cwd),
            "--",
            *argv,
        ]  # fmt: skip


class SandboxUnavailable(OrchestraError):
    """The sandbox is asked for and cannot run here (bwrap is missing)."""


def agent_sandbox(settings: OrchestraSettings) -> AgentSandbox | None:
    """The sandbox for CLI agents orchestra.yaml's `sandbox` asks for (None: `kind: none`)."""
    if settings.sandbox.kind == "none":
        return None
    return AgentSandbox(find_bwrap(), [str(settings.resolve_path(path)) for path in settings.sandbox.writable])


def probe(bwrap: str, network: bool = False) -> str | None:
    """Run `true` in a sandbox like the commands' own; None when it works, else bwrap's complaint."""
    command = [bwrap, *base_arguments(network), "--", "true"]
    try:
        result = subprocess.run(
            command, capture_output=True, text=True, timeout=_PROBE_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return str(error)
    if result.returncode == 0:
        return None
    return (
        result.stderr.strip().splitlines()[-1] if result.stderr.strip() else f"exit code {result.returncode}"
    )
