"""Benchmark parallel branches' worktrees on a generated 20,000-file repository; prints one JSON object.

Measures, in the same run:
- creating one branch's worktree through BranchWorktrees.fork (branch + `git worktree add` + event);
- the floors: plain `git worktree add`, and `git worktree add --no-checkout` (what a lazy checkout of only
  touched paths would start from);
- the fan-in: BranchWorktrees.join of two branches with 10 changed files each (merge-tree, two merge commits,
  update-ref, the session worktree brought to the new head, both worktrees and branches removed; the
  worktrees' files are deleted in the background, waited for before the next measurement).
Targets (issue 13): worktree < 0.5 s; merge of two branches < 0.3 s.
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




def commit_changes(gitport: SubprocessGit, worktree: Path, branch: str, offset: int) -> None:
    """One commit on `branch` in `worktree` changing CHANGED files (different ones per branch)."""
    paths = []
    for number in range(offset, offset + CHANGED):
        path = file_path(number)
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


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="orchestra-bench-worktrees-") as temp:
        root = Path(temp)
        repo = generate_repo(root)
        gitport = SubprocessGit()
        settings = WorkspaceSettings(repos={"app": RepoSettings(path=str(repo))})
        manager = WorkspaceManager(settings, gitport, SystemClock(), root / "project")
        fork_s, merge_s, plain_s, no_checkout_s = [], [], [], []
        for round_number in range(ROUNDS):
            session_id = f"bench{round_number}"
            session = manager.setup_session(session_id, "bench")
            branches = BranchWorktrees(session, gitport, SystemClock(), manager.worktrees_dir(session_id), "bench", lambda e: None)
            settle()
            started = time.perf_counter()
            branches.fork("fan", None, ["fan:one"])
            fork_s.append(time.perf_counter() - started)
            branches.fork("fan", None, ["fan:one", "fan:two"])  # (re-run: the first is recreated)
            for offset, path in enumerate(["fan:one", "fan:two"]):
                context = branches.session_for(path).contexts["app"]
                commit_changes(gitport, context.worktree_path, context.branch_name, offset * 1000 + round_number)
            settle()
            started = time.perf_counter()
            report = branches.join("fan", None, ["fan:one", "fan:two"], ["fan:one", "fan:two"])
            merge_s.append(time.perf_counter() - started)
            assert not report.failed and len(report.merged) == 2, report
            for name, timings, options in (("plain", plain_s, []), ("nocheckout", no_checkout_s, ["--no-checkout"])):
                target = root / f"{name}{round_number}"
                settle()
                started = time.perf_counter()
                git(repo, "worktree", "add", "--quiet", *options, "-b", f"{name}{round_number}", str(target))
                timings.append(time.perf_counter() - started)
        result = {
            "files": FILES,
            "rounds": ROUNDS,
            "branch_worktree_create_s": round(statistics.median(fork_s), 4),
            "git_worktree_add_s": round(statistics.median(plain_s), 4),
            "git_worktree_add_no_checkout_s": round(statistics.median(no_checkout_s), 4),
            "fan_in_merge_two_branches_s": round(statistics.median(merge_s), 4),
            "changed_files_per_branch": CHANGED,
            "targets": {"branch_worktree_create_s": 0.5, "fan_in_merge_two_branches_s": 0.3},
        }
        print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
