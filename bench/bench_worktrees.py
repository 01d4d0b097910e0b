"""Benchmark parallel branches' worktrees on a generated 20,000-file repository; prints one JSON object.

Every figure is a ratio to plain git measured in the same run (this machine's timings vary 2x between runs):
- the floor: a plain `git worktree add` of the repository (median of ROUNDS), and `--no-checkout` for scale;
- a branch worktree through BranchWorktrees.fork: lazy (a branch of Orchestra's own tools: the index, no file
  written; target 0.25x the floor) and full (a branch that runs commands or a CLI agent; target 0.8x);
- a four-branch fan-out run: session setup, four branches forked, 10 files changed and committed in each, the
  fan-in merge, worktrees removed (target 0.35x five plain adds; the session's worktree and the branches' lazy,
  as a run of agents with Orchestra's own tools makes them), and the same with full checkouts (how every
  worktree was made before lazy ones);
- a 20-branch fan-out the same way (cost reported against 21 plain adds), checked to leave no worktree,
  branch or directory behind;
- the fan-in merge of two branches alone.
Floors of several adds are the median single add times their number (adding 21 worktrees of 20,000 files
would take minutes and fill the disk's cache differently).
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import threading
import time
from pathlib import Path

from large_repo import FILES, file_path, generate_repo, git

from orchestra_adapters.git import SubprocessGit
from orchestra_core.model.settings import RepoSettings, WorkspaceSettings
from orchestra_core.ports.clock import SystemClock
from orchestra_core.ports.git import Identity
from orchestra_core.workspace import WorkspaceManager
from orchestra_core.workspace.branches import BranchWorktrees

ROUNDS = 3
CHANGED = 10
WHO = Identity("Bench", "bench@example.com")
TARGETS = {"lazy": 0.25, "full": 0.8, "fan_out_4": 0.35}


def commit_changes(gitport: SubprocessGit, worktree: Path, branch: str, offset: int) -> None:
    """One commit on `branch` in `worktree` changing CHANGED files (different ones per branch)."""
    paths = []
    for number in range(offset, offset + CHANGED):
        path = file_path(number)
        (worktree / path).parent.mkdir(parents=True, exist_ok=True)
        (worktree / path).write_text(f"CHANGED = {number}\n")
        paths.append(path)
    change = gitport.tree_with_files(worktree, f"refs/heads/{branch}", paths)
    sha = gitport.commit_tree(worktree, change.tree, parents=[change.base_commit], message="work", author=WHO, committer=WHO)
    gitport.update_ref(worktree, f"refs/heads/{branch}", sha, expected_old=change.base_commit)
    gitport.sync_index(worktree, paths)


def settle() -> None:
    """Wait for background worktree deletions, so they do not slow the next measurement down."""
    for thread in threading.enumerate():
        if thread.name == "orchestra-worktree-removal":
            thread.join()
    os.sync()


class Bench:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.repo = generate_repo(root)
        self.git = SubprocessGit()
        settings = WorkspaceSettings(repos={"app": RepoSettings(path=str(self.repo))})
        self.manager = WorkspaceManager(settings, self.git, SystemClock(), root / "project")
        self.sessions = 0

    def branches(self, lazy: bool = False) -> BranchWorktrees:
        """A new session (lazy: as a run of agents with Orchestra's own tools sets it up) and its branches."""
        self.sessions += 1
        session_id = f"bench{self.sessions}"
        session = self.manager.setup_session(session_id, "bench", lazy=lazy)
        return BranchWorktrees(session, self.git, SystemClock(), self.manager.worktrees_dir(session_id), "bench", lambda e: None)

    def plain_add(self, name: str, *options: str) -> float:
        settle()
        started = time.perf_counter()
        git(self.repo, "worktree", "add", "--quiet", *options, "-b", name, str(self.root / name))
        elapsed = time.perf_counter() - started
        git(self.repo, "worktree", "remove", "--force", str(self.root / name))
        return elapsed

    def fork_one(self, lazy: bool) -> float:
        branches = self.branches()
        settle()
        started = time.perf_counter()
        branches.fork("fan", None, ["fan:one"], lazy=["fan:one"] if lazy else [])
        elapsed = time.perf_counter() - started
        branches.join("fan", None, ["fan:one"], [])
        return elapsed

    def fan_out(self, count: int, lazy: bool) -> float:
        """Session setup, `count` branches forked, CHANGED files committed in each, merged at the fan-in."""
        settle()
        started = time.perf_counter()
        branches = self.branches(lazy)
        paths = [f"fan:b{number}" for number in range(count)]
        branches.fork("fan", None, paths, lazy=paths if lazy else [])
        for number, path in enumerate(paths):
            context = branches.session_for(path).contexts["app"]
            commit_changes(self.git, context.worktree_path, context.branch_name, number * 100 + 1)
        report = branches.join("fan", None, paths, paths)
        settle()  # the worktrees' files deleted: nothing left behind
        elapsed = time.perf_counter() - started
        assert not report.failed and len(report.merged) == count, report
        self.check_nothing_left(branches)
        return elapsed

    def check_nothing_left(self, branches: BranchWorktrees) -> None:
        session = branches.session_for(None).contexts["app"]
        listed = [line for line in git(self.repo, "worktree", "list", "--porcelain").split("\n") if line.startswith("worktree ")]
        assert len(listed) == 1 + self.sessions, listed  # the repository and each session's own worktree
        assert not any(name.startswith(f"{session.branch_name}--") for name in git(self.repo, "branch", "--format=%(refname:short)").split())
        leftovers = [p.name for p in session.worktree_path.parent.iterdir() if p != session.worktree_path]
        assert not leftovers, leftovers

    def two_branch_merge(self) -> float:
        branches = self.branches()
        branches.fork("fan", None, ["fan:one", "fan:two"], lazy=["fan:one", "fan:two"])
        for offset, path in enumerate(["fan:one", "fan:two"]):
            context = branches.session_for(path).contexts["app"]
            commit_changes(self.git, context.worktree_path, context.branch_name, offset * 1000 + self.sessions)
        settle()
        started = time.perf_counter()
        report = branches.join("fan", None, ["fan:one", "fan:two"], ["fan:one", "fan:two"])
        elapsed = time.perf_counter() - started
        assert not report.failed and len(report.merged) == 2, report
        return elapsed


def main() -> None:
    plain, no_checkout, lazy, full, fan_4_lazy, fan_4_full = [], [], [], [], [], []
    with tempfile.TemporaryDirectory(prefix="orchestra-bench-worktrees-") as temp:
        bench = Bench(Path(temp))
        bench.plain_add("warm-up")  # the first checkout after generating the repository waits on the disk
        for number in range(ROUNDS):  # interleaved, so that the disk's moods fall on every figure alike
            plain.append(bench.plain_add(f"plain{number}"))
            lazy.append(bench.fork_one(lazy=True))
            full.append(bench.fork_one(lazy=False))
            no_checkout.append(bench.plain_add(f"nocheckout{number}", "--no-checkout"))
            fan_4_lazy.append(bench.fan_out(4, lazy=True))
            fan_4_full.append(bench.fan_out(4, lazy=False))
        plain.append(bench.plain_add("plain-late"))
        fan_20 = bench.fan_out(20, lazy=True)
        plain.append(bench.plain_add("plain-last"))
        merge = statistics.median(bench.two_branch_merge() for _ in range(ROUNDS))
    floor = statistics.median(plain)
    figures = {
        "branch_worktree_lazy": (statistics.median(lazy), floor, TARGETS["lazy"]),
        "branch_worktree_full": (statistics.median(full), floor, TARGETS["full"]),
        "fan_out_4_branches_run": (statistics.median(fan_4_lazy), 5 * floor, TARGETS["fan_out_4"]),
        "fan_out_4_branches_run_full_checkouts": (statistics.median(fan_4_full), 5 * floor, None),
        "fan_out_20_branches_run": (fan_20, 21 * floor, None),
    }
    result = {
        "files": FILES,
        "rounds": ROUNDS,
        "changed_files_per_branch": CHANGED,
        "git_worktree_add_s": round(floor, 4),
        "git_worktree_add_each_s": [round(value, 3) for value in plain],
        "git_worktree_add_no_checkout_s": round(statistics.median(no_checkout), 4),
        **{
            name: {"s": round(value, 4), "floor_s": round(base, 4), "ratio": round(value / base, 3), "target_ratio": target}
            for name, (value, base, target) in figures.items()
        },
        "fan_in_merge_two_branches_s": round(merge, 4),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
