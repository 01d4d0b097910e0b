"""The worktrees `orchestra checkout` made (`.orchestra/checkouts/<session>/turn-<turn>/<repo>`), and their cleanup.

They are views of recorded commits with a detached HEAD, so removing one loses nothing unless someone
worked in it: a checkout with uncommitted changes, or whose HEAD moved off the turn's commit (a commit made
there), is kept unless forced; a forced removal keeps a moved HEAD under
`refs/orchestra/abandoned/checkouts/<session>/turn-<turn>/<repo>`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from attrs import evolve, frozen

from orchestra_core.model.layout import ProjectLayout
from orchestra_core.ports.git import Git, GitError

CHECKOUTS = "checkouts"
REMOVE, KEEP = "remove", "keep"
CLEAN, UNCOMMITTED, COMMITTED, UNKNOWN, FORCED = "checkout", "uncommitted", "committed", "unknown", "forced"

RecordedSha = Callable[[str, str, str], "str | None"]
"""(session id, turn id, repo) -> the commit the checkout was made at, None when the store cannot say."""


def checkouts_dir(project_root: Path) -> Path:
    """Where `orchestra checkout` puts its worktrees: `<project>/.orchestra/checkouts/`."""
    return ProjectLayout(project_root).state_dir / CHECKOUTS


@frozen
class CheckoutItem:
    """One checkout worktree of one repo, and what cleanup does with it."""

    session_id: str
    turn_id: str
    repo: str
    path: Path
    head: str | None
    action: str = KEEP
    reason: str = ""
    detail: str = ""
    moved: bool = False  # its HEAD is not (or may not be) the turn's commit: a forced removal keeps it
    abandoned_ref: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id, "turn_id": self.turn_id, "repo": self.repo, "path": str(self.path),
            "head": self.head, "action": self.action, "reason": self.reason, "detail": self.detail,
            "abandoned_ref": self.abandoned_ref,
        }


def plan_checkouts(
    git: Git, roots: Mapping[str, Path], project_root: Path, recorded: RecordedSha, *, force: bool
) -> list[CheckoutItem]:
    """Every checkout worktree git lists in the configured repos, each marked `remove` or `keep` (with why)."""
    base = _real(checkouts_dir(project_root))
    items = []
    for repo, root in roots.items():
        for worktree in git.worktrees(root):
            path = _real(worktree.path)
            if worktree.prunable or not path.is_relative_to(base):
                continue
            parts = path.relative_to(base).parts
            if len(parts) != 3 or not parts[1].startswith("turn-"):
                continue
            session_id, turn_id = parts[0], parts[1].removeprefix("turn-")
            item = CheckoutItem(session_id, turn_id, repo, path, worktree.head)
            items.append(_judge(git, item, recorded(session_id, turn_id, repo), force=force))
    return items


def _judge(git: Git, item: CheckoutItem, recorded: str | None, *, force: bool) -> CheckoutItem:
    reasons: list[tuple[str, str]] = []
    if git.status(item.path):
        reasons.append((UNCOMMITTED, f"uncommitted changes in {item.path}"))
    if recorded is None:
        reasons.append((UNKNOWN, f"session {item.session_id} does not record turn {item.turn_id}'s commit here"))
    elif item.head != recorded:
        reasons.append((COMMITTED, f"its HEAD moved from the turn's commit {recorded[:12]} (commits made there)"))
    item = evolve(item, moved=recorded is None or item.head != recorded)
    if not reasons:
        return evolve(item, action=REMOVE, reason=CLEAN)
    if not force:
        return evolve(item, reason=reasons[0][0], detail=reasons[0][1])
    return evolve(item, action=REMOVE, reason=FORCED, detail="; ".join(reason for reason, _ in reasons))


def remove_checkouts(git: Git, roots: Mapping[str, Path], items: list[CheckoutItem]) -> list[CheckoutItem]:
    """Remove the items marked `remove`; a HEAD that moved is kept reachable under an abandoned ref first.

    A removal git refuses leaves the item kept, with git's message as its detail.
    """
    done = []
    for item in items:
        if item.action != REMOVE:
            done.append(item)
            continue
        root = roots[item.repo]
        ref = None
        try:
            if item.moved and item.head is not None:
                ref = f"refs/orchestra/abandoned/checkouts/{item.session_id}/turn-{item.turn_id}/{item.repo}"
                git.update_ref(root, ref, item.head, expected_old=None)
            git.worktree_remove(root, item.path)
        except GitError as error:
            done.append(evolve(item, action=KEEP, reason="git-error", detail=str(error).splitlines()[0]))
            continue
        _remove_empty_parents(item.path.parent, checkouts_dir_of(item.path))
        done.append(evolve(item, abandoned_ref=ref))
    return done


def checkouts_dir_of(path: Path) -> Path:
    """The `checkouts` directory a checkout worktree's path lies in."""
    return path.parent.parent.parent


def _remove_empty_parents(directory: Path, stop: Path) -> None:
    """Remove `turn-<turn>/` and `<session>/` once empty (never `stop` itself)."""
    while directory != stop and directory.is_relative_to(stop):
        try:
            directory.rmdir()
        except OSError:
            return
        directory = directory.parent


def _real(path: Path) -> Path:
    try:
        return path.resolve()
    except OSError:
        return path
