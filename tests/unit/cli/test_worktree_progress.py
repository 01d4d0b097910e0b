"""Parallel branches' worktree events in `orchestra run`'s progress feed: created, merged, conflicted."""

from __future__ import annotations

from orchestra_cli.runtime.progress_feed import ProgressFeed
from orchestra_core.model.workspace_events import WorktreeCreated, WorktreeMergeConflict, WorktreeMerged

SHA = "0123456789abcdef0123456789abcdef01234567"


class _Notes:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def note(self, line: str) -> None:
        self.lines.append(line)

    def on_event(self, event: object) -> None:
        return None


def _lines(*events: object) -> list[str]:
    notes = _Notes()
    feed = ProgressFeed([notes])
    for event in events:
        feed(event)
    return notes.lines


def test_branch_worktrees_merges_and_conflicts_are_shown() -> None:
    created = WorktreeCreated(repo="app", path="/p/.orchestra/worktrees/1/fan:a/app", branch="o/p/1--fan-a",
                              base_sha=SHA, node_id="fan")
    merged = WorktreeMerged(repo="app", branch="o/p/1--fan-a", into_branch="o/p/1", merge_sha=SHA, node_id="fan")
    conflict = WorktreeMergeConflict(repo="app", branch="o/p/1--fan-b", into_branch="o/p/1",
                                     conflicting_files=("x.py", "y.py"), node_id="fan")
    landed = WorktreeMerged(repo="app", branch="o/p/1--fan-b", into_branch="o/p/1", merge_sha=SHA, node_id="fan",
                            conflicting_files=("x.py", "y.py"))
    assert _lines(created, merged, conflict, landed) == [
        "worktree /p/.orchestra/worktrees/1/fan:a/app on o/p/1--fan-a in app (parallel fan)",
        "merged o/p/1--fan-a into o/p/1 in app (01234567)",
        "warning: merge conflict: o/p/1--fan-b into o/p/1 in app: x.py, y.py; the session branch is unchanged "
        "and the worktrees are kept, unless the join node routes the conflict on",
        "merged o/p/1--fan-b into o/p/1 in app (01234567) with conflict markers left for resolution in x.py, y.py",
    ]


def test_the_session_worktree_is_announced_with_its_branch_not_again() -> None:
    assert _lines(WorktreeCreated(repo="app", path="/w", branch="o/p/1", base_sha=SHA)) == []
