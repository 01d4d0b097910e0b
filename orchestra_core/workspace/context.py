"""WorkspaceContext: where one repo's session work happens, recorded as evidence of the run."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from attrs import evolve, frozen

from orchestra_core.agents.repo_context import RepoContext

WORKTREE = "worktree"
IN_PLACE = "in_place"


@frozen
class WorkspaceContext:
    """One workspace repo of one session.

    Attributes:
        repo_name: The repo's name in orchestra.yaml.
        repo_root: The user's repository.
        worktree_path: Where the session's files live: the managed worktree, or `repo_root` in place.
        branch_name: The session branch (short name).
        base_ref: The configured `base_ref` as written.
        base_sha: The commit `base_ref` named at setup; the session branch starts there.
        head_sha: The session branch's head when this context was taken.
        session_id: The session (run) the branch belongs to.
        pipeline_name: The pipeline that runs in the session.
        isolation: `worktree` or `in_place`.
        created_at: When the branch was set up (UTC).
        original_checkout: In place: the branch (or commit, when detached) the checkout was on before the
            session branch was checked out; "" when not known (a session reopened by a resume).
    """

    repo_name: str
    repo_root: Path
    worktree_path: Path
    branch_name: str
    base_ref: str
    base_sha: str
    head_sha: str
    session_id: str
    pipeline_name: str
    isolation: str
    created_at: datetime
    original_checkout: str = ""

    @property
    def run_id(self) -> str:
        return self.session_id

    @property
    def branch_ref(self) -> str:
        return f"refs/heads/{self.branch_name}"

    def with_head(self, sha: str) -> WorkspaceContext:
        return evolve(self, head_sha=sha)

    def repo_context(self) -> RepoContext:
        """What the repo's tools get: they read and write the session worktree."""
        return RepoContext(
            name=self.repo_name,
            root=self.worktree_path,
            repo_root=self.repo_root,
            branch=self.branch_name,
            base_sha=self.base_sha,
            head_sha=self.head_sha,
        )
