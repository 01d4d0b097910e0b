"""Benchmark the git workspace on a generated 20,000-file repository; prints one JSON object.

Measures, in the same run:
- session setup (branch + managed worktree) through WorkspaceManager.setup_session;
- one per-turn commit of 2 files (1 modified, 1 new) through the workspace's fast path, message
  generation excluded (an instant scripted generator; the diff it is given is included);
- the porcelain baseline: `git add` + `git commit` of the same kind of change in another worktree;
- plain `git worktree add` of the same repository, the floor for setup on this machine's disk;
- a CLI agent's turn: each write captured as a blob when made (`capture_files`), the commit built from those.
- a tool stage's own cost (issue 31): its worktrees watched before the command (a `git status`), then what the
  command changed (the same 2 files) found and committed as its turn (a second status, the commit's fast path).
Targets (issue 6): commit <= half the porcelain time and < 150 ms; setup < 1.5 s.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from pathlib import Path

from large_repo import FILES, generate_repo, git

from orchestra_adapters.git import SubprocessGit
from orchestra_core.model.settings import RepoSettings, WorkspaceSettings
from orchestra_core.model.turn import AgentTurn
from orchestra_core.ports.clock import SystemClock
from orchestra_core.ports.command_runner import CommandResult
from orchestra_core.testing.commit_messages import ScriptedCommitMessages
from orchestra_core.workspace import WorkspaceManager
from orchestra_core.workspace.tool_stage import ToolStageRun

COMMITS = 15
SETUPS = 3




def timed(action: object) -> float:
    started = time.perf_counter()
    action()  # type: ignore[operator]
    return time.perf_counter() - started


def bench_setup(repo: Path, project: Path) -> tuple[list[float], object]:
    settings = WorkspaceSettings(repos={"big": RepoSettings(path=str(repo))})
    generator = ScriptedCommitMessages(["Update values\n\nBench change."], repeat_last=True)
    manager = WorkspaceManager(settings, SubprocessGit(), SystemClock(), project, commit_messages=generator)
    sessions = []
    times = [
        timed(lambda n=n: sessions.append(manager.setup_session(f"bench{n:04d}", "bench")))
        for n in range(SETUPS)
    ]
    return times, sessions[-1]


def bench_plain_worktree_add(repo: Path, root: Path) -> list[float]:
    """The cost to beat: git's own `worktree add` of a new branch, default settings."""
    return [
        timed(lambda n=n: git(repo, "worktree", "add", "--quiet", "-b", f"plain{n}", str(root / f"plain{n}")))
        for n in range(SETUPS)
    ]


def bench_fast_commits(session: object) -> list[float]:
    worktree = session.contexts["big"].worktree_path  # type: ignore[attr-defined]
    times = []
    for number in range(COMMITS + 1):
        (worktree / "pkg00" / "mod00" / "file0.py").write_text(f"VALUE = {number}\n")
        (worktree / "pkg01" / "mod00" / f"new{number}.py").write_text("NEW = True\n")
        turn = AgentTurn(
            "code", number, "model", "provider",
            files_written=["big:pkg00/mod00/file0.py", f"big:pkg01/mod00/new{number}.py"],
        )  # fmt: skip
        times.append(timed(lambda turn=turn: session.commit_turn(turn)))  # type: ignore[attr-defined]
    return times


def bench_captured_commits(session: object) -> tuple[list[float], list[float]]:
    """A CLI agent's turns: each write captured when the tool makes it (one `capture_files` per write), the
    commit built from the captures (the files changed again since). (capture times per write, commit times)."""
    git = SubprocessGit()
    worktree = session.contexts["big"].worktree_path  # type: ignore[attr-defined]
    captures, commits = [], []
    for number in range(COMMITS + 1):
        paths = ["pkg00/mod01/file0.py", f"pkg01/mod01/new{number}.py"]
        versions = {}
        for path in paths:
            (worktree / path).write_text(f"VALUE = {number}\n")
            captures.append(timed(lambda path=path, versions=versions: versions.update(git.capture_files(worktree, [path]))))
            (worktree / path).write_text("changed by a later turn\n")
        turn = AgentTurn(
            "code", number, "model", "provider", files_written=[f"big:{path}" for path in paths],
            file_versions={f"big:{path}": version for path, version in versions.items()},
        )  # fmt: skip
        commits.append(timed(lambda turn=turn: session.commit_turn(turn)))  # type: ignore[attr-defined]
    return captures, commits


def bench_tool_stages(session: object) -> list[float]:
    """Watch + finish of a tool stage that changes 2 files (the command itself is not timed)."""
    worktree = session.contexts["big"].worktree_path  # type: ignore[attr-defined]
    times = []
    for number in range(COMMITS + 1):
        started = time.perf_counter()
        watch = session.watch_tool_stage()  # type: ignore[attr-defined]
        watched = time.perf_counter() - started
        (worktree / "pkg02" / "mod00" / "file0.py").write_text(f"VALUE = {number}\n")
        (worktree / "pkg03" / "mod00" / f"out{number}.txt").write_text("OUT\n")
        run = ToolStageRun("build", "make", CommandResult(0, "", "", 0.0))
        times.append(watched + timed(lambda watch=watch, run=run: watch.finish(run)))
    return times


def bench_porcelain_commits(repo: Path, root: Path) -> list[float]:
    worktree = root / "porcelain"
    git(repo, "worktree", "add", "--quiet", "-b", "porcelain", str(worktree))
    times = []
    for number in range(COMMITS + 1):
        (worktree / "pkg00" / "mod00" / "file0.py").write_text(f"VALUE = {number}\n")
        (worktree / "pkg01" / "mod00" / f"new{number}.py").write_text("NEW = True\n")
        paths = ["pkg00/mod00/file0.py", f"pkg01/mod00/new{number}.py"]

        def commit(paths: list[str] = paths) -> None:
            git(worktree, "add", "--", *paths)
            git(worktree, "commit", "--quiet", "-m", "Update values\n\nBench change.")

        times.append(timed(commit))
    return times


def ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="bench-git-") as scratch:
        root = Path(scratch)
        repo = generate_repo(root)
        project = root / "project"
        project.mkdir()
        setup_times, session = bench_setup(repo, project)
        plain_times = bench_plain_worktree_add(repo, root)
        fast = bench_fast_commits(session)
        captures, captured = bench_captured_commits(session)
        tool_stages = bench_tool_stages(session)
        porcelain = bench_porcelain_commits(repo, root)
    fast_ms, porcelain_ms = statistics.median(fast[1:]), statistics.median(porcelain[1:])
    result = {
        "files": FILES,
        "setup_s": round(statistics.median(setup_times), 3),
        "setup_runs_s": [round(t, 3) for t in setup_times],
        "plain_git_worktree_add_s": round(statistics.median(plain_times), 3),
        "commit_fast_path_ms": ms(fast_ms),
        "commit_porcelain_ms": ms(porcelain_ms),
        "commit_ratio": round(fast_ms / porcelain_ms, 2),
        "capture_per_write_ms": ms(statistics.median(captures[2:])),
        "commit_of_captured_writes_ms": ms(statistics.median(captured[1:])),
        "first_commit_fast_path_ms": ms(fast[0]),
        "first_commit_porcelain_ms": ms(porcelain[0]),
        "tool_stage_ms": ms(statistics.median(tool_stages[1:])),
        "commits_measured": COMMITS,
        "targets": {"commit_ratio_max": 0.5, "commit_ms_max": 150, "setup_s_max": 1.5},
    }
    result["meets_targets"] = (
        result["commit_ratio"] <= 0.5 and result["commit_fast_path_ms"] < 150 and result["setup_s"] < 1.5
    )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
