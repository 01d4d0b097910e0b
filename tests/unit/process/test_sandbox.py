"""The bubblewrap sandbox, for real: only the writable directories (and a private /tmp) can be written, their
git directories stay read-only, the network is off unless allowed, and without bwrap nothing runs."""

from __future__ import annotations

import os
import shlex
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestra_adapters.process.command_runner import SubprocessCommandRunner
from orchestra_adapters.process.sandbox import (
    NOT_INSTALLED,
    AgentSandbox,
    BubblewrapCommandRunner,
    SandboxUnavailable,
    agent_sandbox,
    bwrap_arguments,
    find_bwrap,
    sandboxed_runner,
)
from orchestra_adapters.process.supervised import spawn_supervised
from orchestra_core.model.settings import OrchestraSettings, SandboxSettings
from tests.support.git_repos import git, make_repo
from tests.support.processes import group_of, live_processes_with, wait_until
from tests.support.sandbox import needs_bwrap


def sandbox(**options: object) -> BubblewrapCommandRunner:
    bwrap = find_bwrap()
    assert bwrap is not None
    return BubblewrapCommandRunner(bwrap, **options)  # type: ignore[arg-type]


def linked_worktree(tmp_path: Path) -> tuple[Path, Path]:
    """A repository and a linked worktree of it (whose `.git` is a file naming `<repo>/.git/worktrees/wt`)."""
    repo = make_repo(tmp_path / "repo", {"README.md": "hello\n"})
    worktree = tmp_path / "wt"
    git(repo.path, "worktree", "add", "-q", "-b", "session", str(worktree))
    return repo.path, worktree


def mounts(arguments: list[str]) -> list[tuple[str, str]]:
    """The per-command mounts of a bwrap command line: (option, path) after the base /tmp."""
    start = arguments.index("/tmp", arguments.index("--tmpfs")) + 1
    end = arguments.index("--setenv")
    return [(arguments[i], arguments[i + 1]) for i in range(start, end, 3)]


def test_a_linked_worktree_is_writable_but_its_git_directories_are_not(tmp_path: Path) -> None:
    repo, worktree = linked_worktree(tmp_path)
    stage = tmp_path / "logs" / "node"
    stage.mkdir(parents=True)
    arguments = bwrap_arguments("bwrap", ["sh"], cwd=str(worktree), writable=[str(worktree), str(stage)])
    assert mounts(arguments) == [  # parents before children
        ("--bind", str(worktree)),
        ("--bind", str(stage)),
        ("--ro-bind", str(repo / ".git")),
        ("--ro-bind", str(worktree / ".git")),
        ("--ro-bind", str(repo / ".git" / "worktrees" / "wt")),
    ]
    assert arguments[-2:] == ["--", "sh"] and arguments[-4:-2] == ["--chdir", str(worktree)]
    assert (
        "--unshare-all" in arguments and "--share-net" not in arguments and "--die-with-parent" in arguments
    )


def test_the_working_directory_stays_visible_and_missing_paths_are_skipped(tmp_path: Path) -> None:
    (tmp_path / "work" / "tree").mkdir(parents=True)
    (tmp_path / "work" / ".orchestra").mkdir()
    arguments = bwrap_arguments(
        "bwrap",
        ["sh"],
        cwd=str(tmp_path),
        writable=[str(tmp_path / "work"), str(tmp_path / "gone")],
        network=True,
    )
    assert mounts(arguments) == [
        ("--ro-bind", str(tmp_path)),
        ("--bind", str(tmp_path / "work")),
        ("--ro-bind", str(tmp_path / "work" / ".orchestra")),
    ]
    assert "--share-net" in arguments


def test_without_bwrap_nothing_runs_and_the_command_says_why(tmp_path: Path) -> None:
    result = BubblewrapCommandRunner(None).run("touch ran", cwd=str(tmp_path))
    assert result.exit_code == 127 and result.stderr == NOT_INSTALLED + "\n"
    assert not (tmp_path / "ran").exists()


def test_the_settings_choose_the_runner(tmp_path: Path) -> None:
    assert type(sandboxed_runner(OrchestraSettings())) is SubprocessCommandRunner
    settings = OrchestraSettings(
        sandbox=SandboxSettings(kind="bubblewrap", network=True, writable=("cache", "/abs")),
        project_root=tmp_path,
    )
    runner = sandboxed_runner(settings)
    assert isinstance(runner, BubblewrapCommandRunner) and runner.network
    assert runner.extra_writable == (str(tmp_path / "cache"), "/abs")


# Real bubblewrap ---------------------------------------------------------------------------------------------
def probe(command: str, label: str) -> str:
    """A shell line that prints `label:ok` when `command` succeeds, else `label:refused`."""
    return f"if {command} 2>/dev/null; then echo {label}:ok; else echo {label}:refused; fi"


@needs_bwrap()
def test_only_the_writable_directories_and_a_private_tmp_can_be_written(tmp_path: Path) -> None:
    repo, worktree = linked_worktree(tmp_path)
    extra = tmp_path / "extra"
    extra.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    lines = [
        probe("echo x > made.txt", "worktree"),
        probe('echo x > "$HOME/orchestra-sandbox-probe"', "home"),
        probe("touch /etc/orchestra-sandbox-probe", "etc"),
        probe(f"touch {shlex.quote(str(outside / 'f'))}", "outside"),
        probe(f"touch {shlex.quote(str(extra / 'f'))}", "extra"),
        probe("echo x > /tmp/scratch && test -s /tmp/scratch", "tmp"),
        probe("echo x > .git", "dotgit"),
        probe('echo x >> "$(git rev-parse --git-dir)/config"', "gitdir"),
        probe('echo x >> "$(git rev-parse --git-common-dir)/config"', "commondir"),
        probe("git rev-parse HEAD >/dev/null && git log --oneline -1 >/dev/null", "git-reads"),
    ]
    result = sandbox(writable=[str(extra)]).run("\n".join(lines), cwd=str(worktree), writable=[str(worktree)])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.split() == [
        "worktree:ok", "home:refused", "etc:refused", "outside:refused", "extra:ok", "tmp:ok",
        "dotgit:refused", "gitdir:refused", "commondir:refused", "git-reads:ok",
    ]  # fmt: skip
    assert (worktree / "made.txt").read_text() == "x\n" and (extra / "f").exists()
    assert not (outside / "f").exists() and not Path("/etc/orchestra-sandbox-probe").exists()
    assert not Path("/tmp/scratch").exists()
    assert "x" not in (repo / ".git" / "config").read_text().splitlines()


@needs_bwrap()
def test_in_place_the_checkout_s_git_directory_is_read_only(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "hello\n"})
    before = (repo.path / ".git" / "config").read_text()
    command = "\n".join([probe("echo x >> .git/config", "config"), probe("echo y >> README.md", "files")])
    result = sandbox().run(command, cwd=str(repo.path), writable=[str(repo.path)])
    assert result.stdout.split() == ["config:refused", "files:ok"]
    assert (repo.path / ".git" / "config").read_text() == before


@pytest.fixture
def loopback_server() -> Iterator[int]:
    """A TCP server on the host's loopback that accepts connections; its port."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                connection, _ = server.accept()
            except OSError:
                continue
            connection.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join(5)
    server.close()


@needs_bwrap()
@pytest.mark.parametrize("network", [False, True])
def test_the_network_is_off_unless_allowed(tmp_path: Path, loopback_server: int, network: bool) -> None:
    connect = f"import socket; socket.create_connection(('127.0.0.1', {loopback_server}), timeout=5).close()"
    result = sandbox(network=network).run(
        f"{shlex.quote(os.path.realpath(sys.executable))} -c {shlex.quote(connect)}", cwd=str(tmp_path)
    )
    assert result.ok is network, result.stderr
    if not network:
        assert "Connection refused" in result.stderr or "unreachable" in result.stderr


@needs_bwrap()
def test_a_writable_project_root_keeps_its_state_directory_read_only_but_the_stage_writable(
    tmp_path: Path,
) -> None:
    stage = tmp_path / ".orchestra" / "runs" / "1" / "node"
    stage.mkdir(parents=True)
    command = "\n".join(
        [
            probe("echo x > file.txt", "root"),
            probe("echo x > .orchestra/orchestra.db", "state"),
            probe("echo x > .orchestra/runs/1/node/status.json", "stage"),
        ]
    )
    result = sandbox().run(command, cwd=str(tmp_path), writable=[str(tmp_path), str(stage)])
    assert result.stdout.split() == ["root:ok", "state:refused", "stage:ok"]
    assert not (tmp_path / ".orchestra" / "orchestra.db").exists()


@needs_bwrap()
def test_protected_directories_inside_a_writable_one_stay_read_only(tmp_path: Path) -> None:
    # a project inside its repository: its state directory and a --logs-root below the repo root
    repo = make_repo(tmp_path / "repo", {"README.md": "hello\n"})
    state, logs = repo.path / "app" / ".orchestra", repo.path / "logs"
    stage = logs / "node"
    for directory in (state, stage):
        directory.mkdir(parents=True)
    command = "\n".join(
        [
            probe("echo x > app/file.txt", "repo"),
            probe("echo x > app/.orchestra/orchestra.db", "state"),
            probe("echo x > logs/checkpoint.json", "logs"),
            probe("echo x > logs/node/status.json", "stage"),
        ]
    )
    protected = [str(state), str(logs), str(tmp_path / "elsewhere"), str(tmp_path)]  # outside or above: no mount
    result = sandbox().run(command, cwd=str(repo.path), writable=[str(repo.path), str(stage)], protected=protected)
    assert result.stdout.split() == ["repo:ok", "state:refused", "logs:refused", "stage:ok"], result.stderr
    assert not (state / "orchestra.db").exists() and not (logs / "checkpoint.json").exists()


def test_an_agent_s_sandbox_shares_the_network_keeps_tmp_visible_and_fails_closed(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "hello\n"})
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    arguments = AgentSandbox("bwrap").wrap(
        ["claude", "-p"], cwd=str(repo.path), writable=[str(repo.path)], protected=[], scratch=str(scratch)
    )
    assert "--share-net" in arguments and "--tmpfs" not in arguments  # its provider; its MCP socket under /tmp
    assert arguments[arguments.index("TMPDIR") + 1] == str(scratch)
    assert ("--bind", str(scratch)) in [tuple(arguments[i : i + 2]) for i in range(len(arguments) - 1)]
    assert arguments[-3:] == ["--", "claude", "-p"]
    with pytest.raises(SandboxUnavailable, match="bwrap is not installed, so the agent was not run"):
        AgentSandbox(None).wrap(["claude"], cwd=str(repo.path), writable=[], protected=[], scratch=str(scratch))
    assert agent_sandbox(OrchestraSettings()) is None


# Run in a child process whose controlling terminal is a pseudo-terminal (as `orchestra run` in a user's shell):
# the same probe of /dev/tty unconfined (the control: the terminal is there) and in the sandbox.
IN_A_TERMINAL = """
import os, pty, subprocess, sys
from orchestra_adapters.process.sandbox import BubblewrapCommandRunner, find_bwrap
probe = "if (exec 3</dev/tty) 2>/dev/null; then echo terminal; else echo none; fi"
pid, _terminal = pty.fork()
if pid == 0:
    direct = subprocess.run(["/bin/sh", "-c", probe], capture_output=True, text=True).stdout.strip()
    sandboxed = BubblewrapCommandRunner(find_bwrap()).run(probe, cwd=sys.argv[1], writable=[]).stdout.strip()
    with open(sys.argv[2], "w") as out:
        out.write(direct + " " + sandboxed)
    os._exit(0)
os.waitpid(pid, 0)
"""


@needs_bwrap()
def test_a_sandboxed_command_cannot_reach_the_terminal_orchestra_runs_in(tmp_path: Path) -> None:
    result = tmp_path / "result"
    done = subprocess.run(
        [sys.executable, "-c", IN_A_TERMINAL, str(tmp_path), str(result)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert result.read_text().split() == ["terminal", "none"]


@needs_bwrap()
def test_every_process_of_a_sandbox_is_in_the_group_that_its_supervisor_kills(tmp_path: Path) -> None:
    # so a timeout, a cancel or Orchestra's death reaches them directly, not only through bwrap's parent-death chain
    marker = f"orchestra-test-{tmp_path.name}"
    argv = AgentSandbox(find_bwrap()).wrap(
        ["/bin/sh", "-c", "sleep 300 & sleep 300"], cwd=str(tmp_path), writable=[], protected=[], scratch=str(tmp_path)
    )
    supervised = spawn_supervised(argv, env={**os.environ, "ORCHESTRA_TEST_AGENT": marker}, stdin=subprocess.DEVNULL)
    try:
        assert wait_until(lambda: len(live_processes_with("ORCHESTRA_TEST_AGENT", marker)) >= 5, 30)
        groups = {group_of(pid) for pid in live_processes_with("ORCHESTRA_TEST_AGENT", marker)}
        assert groups == {supervised.pid}
        supervised.kill_group()
        assert wait_until(lambda: not live_processes_with("ORCHESTRA_TEST_AGENT", marker), 5)
    finally:
        supervised.release()
        supervised.process.wait(10)


@needs_bwrap()
def test_a_sandboxed_command_that_signals_everything_it_can_ends_only_its_own_run(tmp_path: Path) -> None:
    beside = subprocess.Popen(["sleep", "30"])  # a process of the same user outside the sandbox
    try:
        killed_itself = sandbox().run("sleep 30 & kill -KILL 0; echo survived", cwd=str(tmp_path), writable=[], timeout=20)
        assert killed_itself.exit_code == -9 and "survived" not in killed_itself.stdout
        everyone = sandbox().run("kill -KILL -1; echo done", cwd=str(tmp_path), writable=[], timeout=20)
        assert everyone.stdout.strip() == "done" and "No such process" in everyone.stderr  # nobody else to signal
        assert beside.poll() is None and sandbox().run("echo next", cwd=str(tmp_path), writable=[]).stdout == "next\n"
    finally:
        beside.kill()
        beside.wait(10)
