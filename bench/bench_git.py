"""Benchmark the git workspace on generated 20,000- and 100,000-file repositories; prints one JSON object.

Measures, in the same run and on each repository:
- session setup (branch + managed worktree) through WorkspaceManager.setup_session, against its floor: one plain
  `git worktree add` of the same repository (default settings), taken in turns so that the disk's and the
  machine's swings fall on all: `setup_s` the lazy setup a pipeline of agents with Orchestra's own tools gets
  (the target), `setup_full_s` the full checkout of one that needs every file (a tool node, a CLI agent);
- one per-turn commit of 2 files (1 modified, 1 new) through the workspace's fast path, message generation
  excluded (an instant scripted generator; the diff it is given is included), against its floor: the porcelain
  `git add -A && git commit` of the same kind of change in another worktree;
- a CLI agent's turn: each write captured as a blob when made (`capture_files`), the commit built from those;
- a tool stage's own cost (issue 31): its worktrees watched before the command (a `git status`), then what the
  command changed (the same 2 files) found and committed as its turn (a second status, the commit's fast path);
- the work of one turn's commit: the git processes it starts and the files they are given to read.
The 100,000-file repository is generated once per bench run (`large_repo.shared_repo`).
Targets (issue 33): a turn's commit at most 0.5x the porcelain commit (and under 150 ms, issue 6); setup at
most 1.0x one plain `git worktree add`. Each figure is printed beside its floor, its target and whether it is
met; `missed` lists the targets not met.
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from large_repo import FILES, MONOREPO_FILES, generate_repo, git, shared_repo

from orchestra_adapters.git import SubprocessGit
from orchestra_adapters.git.command import GitCommand
from orchestra_core.model.settings import RepoSettings, WorkspaceSettings
from orchestra_core.model.turn import AgentTurn
from orchestra_core.ports.clock import SystemClock
from orchestra_core.ports.command_runner import CommandResult
from orchestra_core.testing.commit_messages import ScriptedCommitMessages
from orchestra_core.workspace import WorkspaceManager
from orchestra_core.workspace.session import WorkspaceSession
from orchestra_core.workspace.tool_stage import ToolStageRun

COMMITS = 15
SETUPS = 5
COMMIT_RATIO_MAX = 0.5
COMMIT_MS_MAX = 150
SETUP_RATIO_MAX = 1.0


class CountingCommand(GitCommand):
    """GitCommand that keeps the subcommand and standard input of every git process it starts."""

    def __init__(self) -> None:
        super().__init__()
        self.started: list[tuple[str, bytes]] = []

    def _spawn(self, cwd, argv, args, stdin, env, ok_codes):  # type: ignore[no-untyped-def]
        words = list(args)
        while words and words[0].startswith("-"):  # global options (`-c key=value`) before the subcommand
            words = words[2:] if words[0] == "-c" else words[1:]
        self.started.append((words[0] if words else "", stdin or b""))
        return super()._spawn(cwd, argv, args, stdin, env, ok_codes)


def timed(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def bench_setup_and_plain_add(
    repo: Path, root: Path, label: str, command: GitCommand
) -> tuple[list[float], list[float], list[float], WorkspaceSession]:
    """Session setups, lazy (a pipeline of agents with Orchestra's own tools) and full (one that needs every
    file), and plain `git worktree add`s, in turns (each order rotated from one round to the next); the last full
    session is returned for the commit figures."""
    settings = WorkspaceSettings(repos={"big": RepoSettings(path=str(repo), branch_prefix=f"bench-git-{label}/")})
    generator = ScriptedCommitMessages(["Update values\n\nBench change."], repeat_last=True)
    project = root / "project"
    project.mkdir()
    manager = WorkspaceManager(settings, SubprocessGit(command), SystemClock(), project,
                               commit_messages=generator)  # fmt: skip
    sessions: list[WorkspaceSession] = []
    setups: list[float] = []
    full_setups: list[float] = []
    plains: list[float] = []
    for number in range(SETUPS):
        plain_path, branch = root / f"plain{number}", f"{root.name}-plain-{number}"

        def plain(path: Path = plain_path, branch: str = branch) -> None:
            git(repo, "worktree", "add", "--quiet", "-b", branch, str(path))

        def setup(number: int = number) -> None:
            manager.setup_session(f"lazy{number}", "bench", lazy=True).close()

        def full_setup(number: int = number) -> None:
            sessions.append(manager.setup_session(f"{number}", "bench"))

        order = [(plains, plain), (setups, setup), (full_setups, full_setup)]
        shift = number % len(order)
        for times, action in order[shift:] + order[:shift]:
            times.append(timed(action))
    return setups, full_setups, plains, sessions[-1]


def worktree_of(session: WorkspaceSession) -> Path:
    return session.contexts["big"].worktree_path


def bench_fast_commits(session: WorkspaceSession) -> list[float]:
    worktree = worktree_of(session)
    times = []
    for number in range(COMMITS + 1):
        (worktree / "pkg00" / "mod00" / "file0.py").write_text(f"VALUE = {number}\n")
        (worktree / "pkg01" / "mod00" / f"new{number}.py").write_text("NEW = True\n")
        turn = AgentTurn(
            "code", number, "model", "provider",
            files_written=["big:pkg00/mod00/file0.py", f"big:pkg01/mod00/new{number}.py"],
        )  # fmt: skip
        times.append(timed(lambda turn=turn: session.commit_turn(turn)))
    return times


def commit_work(session: WorkspaceSession, command: CountingCommand) -> dict[str, object]:
    """The git processes one turn's commit of 2 files starts, and the paths handed to them (what they read)."""
    worktree = worktree_of(session)
    paths = ["pkg00/mod02/file0.py", "pkg01/mod02/counted.py"]
    for path in paths:
        (worktree / path).write_text("COUNTED = True\n")
    command.started.clear()
    session.commit_turn(AgentTurn("code", 99, "model", "provider", files_written=[f"big:{p}" for p in paths]))
    named = sorted({p for _, stdin in command.started for p in stdin.replace(b"\0", b"\n").decode().split("\n")
                    if p.removeprefix("./") in paths or p.startswith(("pkg", "./pkg"))})  # fmt: skip
    return {"git_processes": len(command.started), "commands": [name for name, _ in command.started],
            "paths_given_to_git": sorted({p.removeprefix("./") for p in named})}  # fmt: skip


def bench_captured_commits(session: WorkspaceSession) -> tuple[list[float], list[float]]:
    """A CLI agent's turns: each write captured when the tool makes it (one `capture_files` per write), the
    commit built from the captures (the files changed again since). (capture times per write, commit times)."""
    gitport = SubprocessGit()
    worktree = worktree_of(session)
    captures, commits = [], []
    for number in range(COMMITS + 1):
        paths = ["pkg00/mod01/file0.py", f"pkg01/mod01/new{number}.py"]
        versions = {}
        for path in paths:
            (worktree / path).write_text(f"VALUE = {number}\n")
            captures.append(timed(lambda path=path, versions=versions: versions.update(gitport.capture_files(worktree, [path]))))
            (worktree / path).write_text("changed by a later turn\n")
        turn = AgentTurn(
            "code", number, "model", "provider", files_written=[f"big:{path}" for path in paths],
            file_versions={f"big:{path}": version for path, version in versions.items()},
        )  # fmt: skip
        commits.append(timed(lambda turn=turn: session.commit_turn(turn)))
    return captures, commits


def bench_tool_stages(session: WorkspaceSession) -> list[float]:
    """Watch + finish of a tool stage that changes 2 files (the command itself is not timed)."""
    worktree = worktree_of(session)
    times = []
    for number in range(COMMITS + 1):
        started = time.perf_counter()
        watch = session.watch_tool_stage()
        watched = time.perf_counter() - started
        (worktree / "pkg02" / "mod00" / "file0.py").write_text(f"VALUE = {number}\n")
        (worktree / "pkg03" / "mod00" / f"out{number}.txt").write_text("OUT\n")
        run = ToolStageRun("build", "make", CommandResult(0, "", "", 0.0))
        times.append(watched + timed(lambda watch=watch, run=run: watch.finish(run)))
    return times


def bench_porcelain_commits(repo: Path, root: Path) -> list[float]:
    """The floor: `git add -A && git commit` of the same change, in a worktree of its own."""
    worktree = root / "porcelain"
    git(repo, "worktree", "add", "--quiet", "-b", f"{root.name}-porcelain", str(worktree))
    times = []
    for number in range(COMMITS + 1):
        (worktree / "pkg00" / "mod00" / "file0.py").write_text(f"VALUE = {number}\n")
        (worktree / "pkg01" / "mod00" / f"new{number}.py").write_text("NEW = True\n")

        def commit() -> None:
            git(worktree, "add", "-A")
            git(worktree, "commit", "--quiet", "-m", "Update values\n\nBench change.")

        times.append(timed(commit))
    return times


def figure(value: float, floor: float | None, target: str | None, met: bool | None) -> dict[str, object]:
    ratio = round(value / floor, 2) if floor else None
    return {"value": value, "floor": floor, "ratio": ratio, "target": target, "met": met}


def ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


def measure(repo: Path, files: int) -> dict[str, object]:
    """Every figure of one repository."""
    with tempfile.TemporaryDirectory(prefix=f"bench-git-{files}-") as scratch:
        root = Path(scratch)
        command = CountingCommand()
        setups, full_setups, plains, session = bench_setup_and_plain_add(repo, root, str(files), command)
        fast = bench_fast_commits(session)
        work = commit_work(session, command)
        captures, captured = bench_captured_commits(session)
        tool_stages = bench_tool_stages(session)
        porcelain = bench_porcelain_commits(repo, root)
    setup_s, plain_s = round(statistics.median(setups), 3), round(statistics.median(plains), 3)
    full_setup_s = round(statistics.median(full_setups), 3)
    fast_ms, porcelain_ms = ms(statistics.median(fast[1:])), ms(statistics.median(porcelain[1:]))
    captured_ms = ms(statistics.median(captured[1:]))
    commit_target = f"<= {COMMIT_RATIO_MAX}x floor and < {COMMIT_MS_MAX} ms"

    def commit_met(value: float) -> bool:
        return value <= COMMIT_RATIO_MAX * porcelain_ms and value < COMMIT_MS_MAX

    return {
        "files": files,
        "setup_s": figure(setup_s, plain_s, f"<= {SETUP_RATIO_MAX}x floor", setup_s <= SETUP_RATIO_MAX * plain_s),
        "setup_runs_s": [round(t, 3) for t in setups],
        "setup_full_s": figure(full_setup_s, plain_s, None, None),
        "setup_full_runs_s": [round(t, 3) for t in full_setups],
        "plain_git_worktree_add_runs_s": [round(t, 3) for t in plains],
        "commit_fast_path_ms": figure(fast_ms, porcelain_ms, commit_target, commit_met(fast_ms)),
        "commit_of_captured_writes_ms": figure(captured_ms, porcelain_ms, commit_target, commit_met(captured_ms)),
        "capture_per_write_ms": figure(ms(statistics.median(captures[2:])), None, None, None),
        "first_commit_fast_path_ms": figure(ms(fast[0]), ms(porcelain[0]), None, None),
        "tool_stage_ms": figure(ms(statistics.median(tool_stages[1:])), porcelain_ms, None, None),
        "commit_work": work,
        "floors": {
            "setup": "one plain `git worktree add -b` of the repository",
            "commit": "`git add -A && git commit` of the same 2-file change",
        },
    }


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="bench-git-") as scratch:
        results = [measure(generate_repo(Path(scratch)), FILES), measure(shared_repo(MONOREPO_FILES), MONOREPO_FILES)]
    missed = [
        f"{result['files']} files: {name}"
        for result in results
        for name, value in result.items()
        if isinstance(value, dict) and value.get("met") is False
    ]
    print(json.dumps({"repos": results, "commits_measured": COMMITS, "setups_measured": SETUPS,
                      "load_average": [round(x, 2) for x in os.getloadavg()], "missed": missed}))  # fmt: skip


if __name__ == "__main__":
    main()
