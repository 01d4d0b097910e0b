"""`orchestra cleanup`: plan which sessions' worktrees and branches can go (and why the others stay), then apply.

A repo of a session goes when its work is safe elsewhere: every branch of it is merged into the repo's base
(merging it there would change nothing: merged, fast-forwarded, squashed) or its head is what the latest
RemotePushed says the remote holds. Otherwise it is kept with a reason; `force` removes unmerged, unpushed,
conflicted, interrupted and dirty work (unmerged heads kept reachable under `refs/orchestra/abandoned/...`)
but never a running session, a protected branch or a branch checked out outside Orchestra's worktrees.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from attrs import evolve, field, frozen

from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.layout import ProjectLayout
from orchestra_core.model.settings import RepoSettings, WorkspaceSettings
from orchestra_core.ports.clock import Clock
from orchestra_core.ports.git import Git, GitError, WorktreeInfo
from orchestra_core.ports.session_locks import SessionLocks
from orchestra_core.ports.session_store import SessionInfo, SessionStatus, SessionStore
from orchestra_core.session.liveness import PARALLEL_SPAWN, live_info
from orchestra_core.session.restart import resume_advice
from orchestra_core.workspace.cleanup_records import RepoWork, SessionWork, session_work
from orchestra_core.workspace.naming import is_protected
from orchestra_core.workspace.setup import configured_path

REMOVE, KEEP = "remove", "keep"
# Reasons a repo of a session is kept: the first three hold even with force.
RUNNING, PROTECTED, CHECKED_OUT, TOO_RECENT = "running", "protected", "checked-out", "too-recent"
INTERRUPTED, CONFLICT, UNCOMMITTED, UNMERGED, UNPUSHED = "interrupted", "conflict", "uncommitted", "unmerged", "unpushed"
NOT_CONFIGURED = "not-configured"
BUDGET_EXCEEDED = "budget-exceeded"
# Reasons a repo goes.
MERGED, PUSHED, FORCED = "merged", "pushed", "forced"
_SESSION_LIMIT = 1_000_000


@frozen
class CleanupItem:
    """One repo of one session: removed (or to be) or kept, and why.

    Attributes:
        action: `remove` or `keep`.
        reason: Why (see the module's reason names).
        detail: A readable line saying more (which branch is unmerged, who holds the lock, ...).
        branches: The session's branches that exist in the repo, the session branch first.
        heads: Branch -> its head SHA when planned.
        worktrees: The session's worktrees that exist (absolute paths).
        unsafe: Branches whose head is neither merged nor pushed (kept under an abandoned ref when forced).
        abandoned_refs: Refs that keep unmerged heads reachable (after a forced removal).
        repo_root: The repository's directory.
        status: The session's status when planned (`interrupted` for a running one whose runner is gone).
    """

    session_id: str
    pipeline: str
    repo: str
    action: str
    reason: str
    detail: str = ""
    branches: tuple[str, ...] = ()
    heads: Mapping[str, str] = field(factory=dict)
    worktrees: tuple[str, ...] = ()
    unsafe: tuple[str, ...] = ()
    abandoned_refs: tuple[str, ...] = ()
    repo_root: str = ""
    status: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id, "pipeline": self.pipeline, "status": self.status, "repo": self.repo,
            "reason": self.reason,
            "detail": self.detail, "branches": list(self.branches), "heads": dict(self.heads),
            "worktrees": list(self.worktrees), "abandoned_refs": list(self.abandoned_refs),
        }


@frozen
class CleanupOptions:
    """What the user asked: `older_than` keeps sessions active more recently; `force` removes unsafe work."""

    older_than: timedelta | None = None
    force: bool = False


@frozen
class CleanupPlan:
    """Every repo of every session with something left to remove, and the stale worktree records to prune."""

    items: tuple[CleanupItem, ...] = ()
    prunable: tuple[tuple[str, str], ...] = ()  # (repo, path) of worktree records whose directory is gone

    @property
    def removed(self) -> list[CleanupItem]:
        return [item for item in self.items if item.action == REMOVE]

    @property
    def kept(self) -> list[CleanupItem]:
        return [item for item in self.items if item.action == KEEP]

    def to_json(self) -> dict[str, Any]:
        return {
            "removed": [item.to_json() for item in self.removed],
            "kept": [item.to_json() for item in self.kept],
            "pruned": [{"repo": repo, "path": path} for repo, path in self.prunable],
        }


class CleanupError(OrchestraError):
    """Cleanup cannot run (another cleanup holds its lock)."""


class CleanupPlanner:
    """Decides, per session and repo, what `orchestra cleanup` removes and what it keeps."""

    def __init__(
        self,
        store: SessionStore,
        locks: SessionLocks,
        git: Git,
        clock: Clock,
        settings: WorkspaceSettings,
        config_dir: Path,
        project_root: Path,
    ) -> None:
        self._store, self._locks, self._git, self._clock = store, locks, git, clock
        self._repos = dict(settings.repos)
        self._config_dir = Path(config_dir).resolve()
        self._worktrees_dir = ProjectLayout(Path(project_root).resolve()).worktrees_dir

    def repo_roots(self) -> dict[str, Path]:
        """Each configured repo's directory that is a git repository with a working tree."""
        roots = {}
        for name, settings in self._repos.items():
            path = configured_path(settings, self._config_dir)
            try:
                info = self._git.repository(path) if path.is_dir() else None
            except GitError:
                info = None
            if info is not None and info.toplevel is not None:
                roots[name] = info.toplevel
        return roots

    def plan(self, options: CleanupOptions) -> CleanupPlan:
        """Look at every session in the store and every configured repo; change nothing.

        Raises:
            StoreError: The store cannot be read.
            GitError: git failed on a configured repository.
        """
        roots = self.repo_roots()
        listed = {root: self._git.worktrees(root) for root in roots.values()}
        items: list[CleanupItem] = []
        for info in self._store.list_sessions(limit=_SESSION_LIMIT):
            if info.metadata.spawn_reason == PARALLEL_SPAWN:
                continue  # a parallel branch's worktrees are recorded by the run it belongs to
            work = session_work(self._store, info)
            status = self._status(info)
            for repo in work.repos.values():
                item = self._repo_item(work, status, repo, roots, listed, options)
                if item is not None:
                    items.append(item)
        prunable = tuple(
            (name, str(worktree.path))
            for name, root in roots.items()
            for worktree in listed[root]
            if worktree.prunable
        )
        return CleanupPlan(tuple(items), prunable)

    def recheck(self, item: CleanupItem, options: CleanupOptions) -> CleanupItem:
        """The item planned again now, under the session's lock (held by this cleanup), with the status planned."""
        info = self._store.get_session(item.session_id)
        work = session_work(self._store, info)
        roots = self.repo_roots()
        repo = work.repos.get(item.repo)
        root = roots.get(item.repo)
        fresh = None
        if repo is not None and root is not None:
            status = SessionStatus(item.status)
            fresh = self._repo_item(work, status, repo, roots, {root: self._git.worktrees(root)}, options)
        return fresh if fresh is not None else evolve(item, action=KEEP, reason="gone", detail="nothing left")

    # Deciding ----------------------------------------------------------------------------------------
    def _status(self, info: SessionInfo) -> SessionStatus:
        """The session's live status; `running` while anyone holds its lock (a resume takes it before it
        records anything), `interrupted` for a run whose runner is gone without recording an end."""
        if self._locks.holder(info.session_id) is not None:
            return SessionStatus.RUNNING
        return live_info(self._store, info, self._locks).status

    def _repo_item(
        self,
        work: SessionWork,
        status: SessionStatus,
        repo: RepoWork,
        roots: Mapping[str, Path],
        listed: Mapping[Path, tuple[WorktreeInfo, ...]],
        options: CleanupOptions,
    ) -> CleanupItem | None:
        info = work.info
        item = CleanupItem(info.session_id, info.metadata.pipeline, repo.repo, KEEP, "", status=status.value)
        root = roots.get(repo.repo)
        if root is None:
            return None if not repo.branches else evolve(
                item, reason=NOT_CONFIGURED,
                detail=f"workspace.repos.{repo.repo} is not configured or not a repository here",
                branches=tuple(repo.branches),
            )
        heads = {
            branch: sha for branch in repo.branches
            if (sha := self._git.resolve_commit(root, f"refs/heads/{branch}")) is not None
        }
        ours, foreign = self._worktrees(work, repo, listed[root])
        if not heads and not ours:
            return None  # nothing left of it (cleaned up, or removed by hand)
        item = evolve(
            item, branches=tuple(heads), heads=heads, worktrees=tuple(str(w.path) for w in ours),
            repo_root=str(root),
        )
        settings = self._repos[repo.repo]
        held = self._held_reason(work, status, repo, settings, foreign, options)
        if held is not None:
            return evolve(item, reason=held[0], detail=held[1])
        return self._judge(item, work, status, repo, settings, root, ours, options)

    def _held_reason(
        self,
        work: SessionWork,
        status: SessionStatus,
        repo: RepoWork,
        settings: RepoSettings,
        foreign: list[WorktreeInfo],
        options: CleanupOptions,
    ) -> tuple[str, str] | None:
        """A reason to keep the repo that `force` does not override."""
        if status in (SessionStatus.RUNNING, SessionStatus.NEW):
            holder = self._locks.holder(work.info.session_id)
            return RUNNING, (
                f"its runner holds the session lock (pid {holder})" if holder
                else "it is recorded as running where this project's locks cannot see its runner"
            )
        protected = [branch for branch in repo.branches if is_protected(branch, settings.protected_branches)]
        if protected:
            return PROTECTED, f"{protected[0]} matches workspace.repos.{repo.repo}.protected_branches"
        if foreign:
            where = foreign[0]
            whose = "the user's checkout (isolation: in_place)" if repo.in_place else "a worktree"
            return CHECKED_OUT, f"{where.branch} is checked out in {whose} {where.path}"
        recent = options.older_than is not None and work.last_active is not None and (
            _utc(self._clock.now()) - _utc(work.last_active) < options.older_than
        )
        if recent and work.last_active is not None:
            return TOO_RECENT, f"last active {work.last_active.isoformat(timespec='seconds')}"
        return None

    def _judge(
        self,
        item: CleanupItem,
        work: SessionWork,
        status: SessionStatus,
        repo: RepoWork,
        settings: RepoSettings,
        root: Path,
        ours: list[WorktreeInfo],
        options: CleanupOptions,
    ) -> CleanupItem:
        base = self._base(root, settings)
        pushed = {b for b, sha in item.heads.items() if repo.pushed.get(b) == sha}
        merged = {b for b, sha in item.heads.items() if b not in pushed and self._merged(root, base, sha)}
        unsafe = tuple(b for b in item.heads if b not in pushed and b not in merged)
        dirty = [str(w.path) for w in ours if w.path.is_dir() and self._git.status(w.path)]
        item = evolve(item, unsafe=unsafe)
        reasons: list[tuple[str, str]] = []
        if status is SessionStatus.INTERRUPTED:
            reasons.append((INTERRUPTED, resume_advice(self._store, work.info.session_id)))
        if status is SessionStatus.BUDGET_EXCEEDED:
            advice = f"a budget stopped it; `orchestra resume {work.info.session_id} --max-cost N` continues it"
            reasons.append((BUDGET_EXCEEDED, advice))
        if repo.conflict and any(branch != repo.branch for branch in item.heads):
            reasons.append((CONFLICT, "a fan-in merge conflict is preserved in its parallel branches"))
        if dirty:
            reasons.append((UNCOMMITTED, f"uncommitted changes in {dirty[0]}"))
        if unsafe:
            what = UNPUSHED if settings.remote else UNMERGED
            reasons.append((what, f"{unsafe[0]} is not merged into {base or 'the base'}" + (
                " nor pushed" if settings.remote else "")))
        if reasons and not options.force:
            return evolve(item, reason=reasons[0][0], detail=reasons[0][1])
        if reasons:
            return evolve(item, action=REMOVE, reason=FORCED, detail="; ".join(r for r, _ in reasons))
        return evolve(item, action=REMOVE, reason=PUSHED if pushed and not merged else MERGED)

    def _worktrees(
        self, work: SessionWork, repo: RepoWork, listed: tuple[WorktreeInfo, ...]
    ) -> tuple[list[WorktreeInfo], list[WorktreeInfo]]:
        """The session's own worktrees that git lists, and the other worktrees holding one of its branches."""
        recorded = {_real(Path(path)) for path in repo.worktrees}
        ours, foreign = [], []
        for worktree in listed:
            if worktree.prunable or worktree.bare:
                continue
            mine = _real(worktree.path) in recorded and _real(worktree.path).is_relative_to(
                _real(self._worktrees_dir)
            )
            if mine:
                ours.append(worktree)
            elif worktree.branch in repo.branches:
                foreign.append(worktree)
        return ours, foreign

    def _base(self, root: Path, settings: RepoSettings) -> str:
        """The base ref the work must be merged into: `base_ref`, or the checkout's HEAD for `HEAD`."""
        if settings.base_ref == "HEAD":
            return self._git.current_branch(root) or "HEAD"
        return settings.base_ref

    def _merged(self, root: Path, base: str, head: str) -> bool:
        base_sha = self._git.resolve_commit(root, base)
        if base_sha is None:
            return False
        if base_sha == head:
            return True
        try:
            merge = self._git.merge_tree(root, base_sha, head)
        except GitError:
            return False  # no common history
        return merge.clean and not self._git.diff(root, base_sha, merge.tree)


def _real(path: Path) -> Path:
    return path.resolve()



def _utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
