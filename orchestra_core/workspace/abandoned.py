"""Commits a restore moves a branch away from stay reachable under `refs/orchestra/abandoned/<session>/<n>`."""

from __future__ import annotations

from pathlib import Path

from orchestra_core.ports.git import Git
from orchestra_core.workspace.naming import ref_component

ABANDONED_PREFIX = "refs/orchestra/abandoned"
_MAX_KEPT = 100_000


def abandoned_prefix(session_id: str) -> str:
    """`refs/orchestra/abandoned/<session-id>` with the id made one valid ref component."""
    return f"{ABANDONED_PREFIX}/{ref_component(session_id, 'session')}"


def keep_abandoned(git: Git, repo: Path, session_id: str, sha: str) -> str:
    """Point the next free `refs/orchestra/abandoned/<session-id>/<n>` (n = 1, 2, ...) at `sha`; return it.

    Such refs are never deleted by Orchestra, so the commits stay reachable (and out of `git gc`'s way)
    after the branch that held them was moved back. A commit already kept for this session is not kept
    twice: its existing ref is returned.

    Raises:
        GitError: git failed.
    """
    prefix = abandoned_prefix(session_id)
    for number in range(1, _MAX_KEPT):
        ref = f"{prefix}/{number}"
        held = git.resolve_commit(repo, ref)
        if held == sha:
            return ref
        if held is None:
            git.update_ref(repo, ref, sha, expected_old="")  # created, never overwritten
            return ref
    raise ValueError(f"{repo}: more than {_MAX_KEPT} abandoned heads kept for session {session_id}")
