"""Parallel branches' worktrees: each writing branch works on its own git branch and worktree, forked from
its parent's head; at the join the branches are merged back (`merge_tree`, nothing touched on conflict)."""

from __future__ import annotations

import shutil
import threading
import uuid
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from attrs import evolve, field, frozen

from orchestra_core.model.workspace_events import (
    WorkspaceEvent,
    WorktreeCreated,
    WorktreeMergeConflict,
    WorktreeMerged,
)
from orchestra_core.ports.clock import Clock
from orchestra_core.ports.git import Git, GitError, Identity, MergeResult
from orchestra_core.workspace.abandoned import keep_abandoned
from orchestra_core.workspace.committer import AGENT_EMAIL, COMMITTER_NAME
from orchestra_core.workspace.context import WORKTREE, WorkspaceContext
from orchestra_core.workspace.errors import ProtectedBranchError, WorkspaceError
from orchestra_core.workspace.messages import with_trailers
from orchestra_core.workspace.naming import free_branch_name, is_protected, ref_component
from orchestra_core.workspace.session import WorkspaceSession
from orchestra_core.workspace.uncommitted import save_uncommitted
from orchestra_core.workspace.worktree_include import copy_included_files

MERGE_TRAILER = "Orchestra-Merge"
HUNK_CHARS = 4_000  # conflict-marker text kept per file in the context
MAX_HUNKS = 20


@frozen
class MergeReport:
    """How joining a fan-out's branches went.

    Attributes:
        conflicts: Per conflicting branch and repo: `repo`, `branch` (its git branch), `branch_path`,
            `into` (the parent's git branch), `branches` (the git branches merged before it, then it),
            `files`, `hunks` (`{file, text}` with the conflict-marker regions, capped).
        merged: Branch path -> repo -> merge commit, for the branches that were merged.
        branches: The branch paths that had worktrees (none: the join had nothing to do).
    """

    conflicts: tuple[dict[str, Any], ...] = ()
    merged: Mapping[str, Mapping[str, str]] = field(factory=dict)
    branches: tuple[str, ...] = ()

    @property
    def failed(self) -> bool:
        return bool(self.conflicts)

    def summary(self) -> str:
        """A readable account: the conflicts with their hunks, else what was merged."""
        if not self.conflicts:
            merged = ", ".join(f"{path} ({', '.join(sorted(repos))})" for path, repos in self.merged.items())
            return f"merged {merged}" if merged else "no branch had commits to merge"
        lines = []
        for conflict in self.conflicts:
            lines.append(
                f"{conflict['repo']}: merging {conflict['branch']} ({conflict['branch_path']}) into "
                f"{conflict['into']} conflicts in {', '.join(conflict['files'])}"
            )
            for hunk in conflict["hunks"]:
                lines.append(f"--- {hunk['file']}\n{hunk['text']}")
        return "\n".join(lines)


class BranchWorktrees:
    """The parallel branches of one session: their WorkspaceSessions, created at fork, merged at join."""

    def __init__(
        self,
        session: WorkspaceSession,
        git: Git,
        clock: Clock,
        worktrees_dir: Path,
        pipeline_name: str,
        emit: Callable[[WorkspaceEvent], None],
    ) -> None:
        self._root = session
        self._git = git
        self._clock = clock
        self._dir = worktrees_dir
        self._pipeline = pipeline_name
        self._emit = emit
        self._sessions: dict[str, WorkspaceSession] = {}
        self._lock = threading.Lock()

    def session_for(self, branch: str | None) -> WorkspaceSession:
        """The session a node of `branch` works in: its own, else its nearest enclosing branch's, else the run's."""
        with self._lock:
            while branch:
                if branch in self._sessions:
                    return self._sessions[branch]
                branch = branch.rsplit("/", 1)[0] if "/" in branch else None
        return self._root

    def sessions(self) -> list[WorkspaceSession]:
        """Every branch session alive now."""
        with self._lock:
            return list(self._sessions.values())

    def branch_session(self, path: str) -> WorkspaceSession | None:
        """The session of exactly this branch (None when it has no worktrees of its own)."""
        with self._lock:
            return self._sessions.get(path)

    def worktree_path(self, branch_path: str, repo: str) -> Path:
        """`<worktrees>/<session>/<branch path>/<repo>`; each path segment keeps its `node:start` colon, so
        it never collides with a repo name (a plain word)."""
        return branch_worktree_path(self._dir, branch_path, repo)

    def adopt(self, path: str, heads: Mapping[str, str]) -> None:
        """A branch that ran on another machine: move its git branch here (and its worktree with it) to the commit
        each repo ended at (fetched from the remote), so that the join merges it as if it had run here.

        Raises:
            WorkspaceError: The branch has no worktrees here, or git failed.
        """
        session = self.branch_session(path)
        if session is None:
            raise WorkspaceError(f"parallel branch {path} has no worktrees to bring its work into")
        for repo, sha in heads.items():
            context = session.contexts.get(repo)
            if context is None:
                continue
            git, root = self._git, context.repo_root
            try:
                with git.lock(root):
                    old = git.resolve_commit(root, context.branch_ref)
                    if old == sha:
                        continue
                    git.update_ref(root, context.branch_ref, sha, expected_old=old)
                    if old is not None:
                        git.checkout_tree(context.worktree_path, old, sha)
            except GitError as error:
                raise WorkspaceError(f"{repo}: could not bring branch {context.branch_name} to {sha}: {error}") from error
            session.note_head(repo, sha)

    # --- fork ------------------------------------------------------------------------------------

    def fork(self, node_id: str, parent: str | None, paths: Sequence[str]) -> None:
        """Give each branch in `paths` a fresh branch and worktree per repo, from the parent's current head.

        A branch left by an earlier run of the node (a retry, a loop, a resume) is removed first; its commits
        stay reachable under `refs/orchestra/abandoned/<session>/<n>`.

        Raises:
            WorkspaceError: git failed (the worktrees made so far stay; the next fork replaces them).
        """
        base = self.session_for(parent)
        taken: set[str] = set()
        for path in paths:
            contexts = []
            for repo, context in base.contexts.items():
                try:
                    contexts.append(self._fork_repo(node_id, path, context, taken))
                except GitError as error:
                    raise WorkspaceError(f"{repo}: could not create the worktree of branch {path}: {error}") from error
            with self._lock:
                self._sessions[path] = base.child(contexts)

    def _fork_repo(self, node_id: str, path: str, parent: WorkspaceContext, taken: set[str]) -> WorkspaceContext:
        git, root = self._git, parent.repo_root
        head = git.resolve_commit(root, parent.branch_ref)
        if head is None:
            raise WorkspaceError(f"{parent.repo_name}: branch {parent.branch_name} no longer exists")
        suffix = ref_component(path.rsplit("/", 1)[-1].replace(":", "-"), "branch")
        name = free_branch_name(f"{parent.branch_name}--{suffix}", taken)
        taken.add(name)
        worktree = self.worktree_path(path, parent.repo_name)
        with git.lock(root):
            self._discard(parent, name, worktree)
            git.create_branch(root, name, head)
            worktree.parent.mkdir(parents=True, exist_ok=True)
            git.worktree_add(root, worktree, name)
        copy_included_files(git, root, worktree, self._emit, session_id=parent.session_id, repo=parent.repo_name)
        self._emit(
            WorktreeCreated(
                session_id=parent.session_id,
                repo=parent.repo_name,
                path=str(worktree),
                branch=name,
                base_sha=head,
                node_id=node_id,
            )
        )
        return WorkspaceContext(
            repo_name=parent.repo_name,
            repo_root=root,
            worktree_path=worktree,
            branch_name=name,
            base_ref=parent.branch_name,
            base_sha=head,
            head_sha=head,
            session_id=parent.session_id,
            pipeline_name=parent.pipeline_name,
            isolation=WORKTREE,
            created_at=self._clock.now(),
        )

    def _discard(self, parent: WorkspaceContext, name: str, worktree: Path) -> None:
        """Remove an earlier worktree and branch of this name, keeping their commits (and what the worktree held
        uncommitted) under abandoned refs."""
        git, root = self._git, parent.repo_root
        git.worktree_prune(root)
        for listed in git.worktrees(root):
            if listed.path.resolve() == worktree.resolve() or listed.branch == name:
                self._save_uncommitted(evolve(parent, worktree_path=listed.path, branch_name=listed.branch or name), "fork")
                git.worktree_remove(root, listed.path)
        if worktree.exists():
            raise WorkspaceError(f"{parent.repo_name}: {worktree} exists but is not a worktree of {root}")
        old = git.resolve_commit(root, f"refs/heads/{name}")
        if old is not None:
            keep_abandoned(git, root, parent.session_id, old)
            git.delete_branch(root, name)

    # --- join ------------------------------------------------------------------------------------

    def join(self, node_id: str, parent: str | None, paths: Sequence[str], merge: Collection[str]) -> MergeReport:
        """Merge the branches in `merge` (of `paths`, in order) into the parent, one merge commit each.

        The parent's branch moves (and its worktree follows) only when every merge is clean; then every
        branch's worktree and git branch is removed (the commits of branches not merged, and what a worktree
        held uncommitted, stay under `refs/orchestra/abandoned/...`). On a conflict nothing moves and every
        worktree is kept.
        """
        base = self.session_for(parent)
        with self._lock:
            forked = {path: self._sessions[path] for path in paths if path in self._sessions}
        if not forked:
            return MergeReport()
        plans: dict[str, tuple[str, str, list[tuple[str, str]]]] = {}
        conflicts: list[dict[str, Any]] = []
        for repo, context in base.contexts.items():
            plan, found = self._merge_repo(node_id, context, forked, merge)
            plans[repo] = plan
            conflicts += found
        if conflicts:
            for conflict in conflicts:
                self._emit(
                    WorktreeMergeConflict(
                        session_id=base.session_id,
                        repo=conflict["repo"],
                        branch=conflict["branch"],
                        into_branch=conflict["into"],
                        conflicting_files=conflict["files"],
                        node_id=node_id,
                        detail=f"parallel branch {conflict['branch_path']}",
                    )
                )
            return MergeReport(conflicts=tuple(conflicts), branches=tuple(forked))
        merged = self._land(node_id, base, plans)
        self._remove(forked, merged)
        return MergeReport(merged=merged, branches=tuple(forked))

    def _merge_repo(
        self,
        node_id: str,
        into: WorkspaceContext,
        forked: Mapping[str, WorkspaceSession],
        merge: Collection[str],
    ) -> tuple[tuple[str, str, list[tuple[str, str]]], list[dict[str, Any]]]:
        """(old head, new head, [(branch path, merge commit)]) for one repo, and its conflicts."""
        git, root = self._git, into.repo_root
        old = git.resolve_commit(root, into.branch_ref)
        if old is None:
            raise WorkspaceError(f"{into.repo_name}: branch {into.branch_name} no longer exists")
        head = old
        commits: list[tuple[str, str]] = []
        merged_names: list[str] = []
        conflicts: list[dict[str, Any]] = []
        for path, session in forked.items():
            context = session.contexts.get(into.repo_name)
            if context is None or path not in merge:
                continue
            tip = git.resolve_commit(root, context.branch_ref)
            if tip is None or tip == context.base_sha:
                continue  # nothing committed in this branch
            result = git.merge_tree(root, head, tip)
            if not result.clean:
                conflicts.append(_conflict(into, context, path, merged_names, result))
                continue
            head = git.commit_tree(
                root,
                result.tree,
                parents=[head, tip],
                message=self._merge_message(node_id, into, context, path),
                author=self._identity(),
                committer=self._identity(),
            )
            commits.append((path, head))
            merged_names.append(context.branch_name)
        return (old, head, commits), conflicts

    def _land(
        self, node_id: str, base: WorkspaceSession, plans: Mapping[str, tuple[str, str, list[tuple[str, str]]]]
    ) -> dict[str, dict[str, str]]:
        merged: dict[str, dict[str, str]] = {}
        for repo, (old, new, commits) in plans.items():
            if old == new:
                continue
            into = base.contexts[repo]
            if is_protected(into.branch_name, base.protected_branches(repo)):
                raise ProtectedBranchError(f"{repo}: refusing to move protected branch {into.branch_name!r}")
            try:
                with self._git.lock(into.repo_root):
                    self._git.update_ref(into.repo_root, into.branch_ref, new, expected_old=old)
                    self._git.checkout_tree(into.worktree_path, old, new)
            except GitError as error:
                raise WorkspaceError(f"{repo}: could not land the merge on {into.branch_name}: {error}") from error
            base.note_head(repo, new)
            for path, sha in commits:
                branch = self._sessions[path].contexts[repo].branch_name
                merged.setdefault(path, {})[repo] = sha
                self._emit(
                    WorktreeMerged(
                        session_id=into.session_id,
                        repo=repo,
                        branch=branch,
                        into_branch=into.branch_name,
                        merge_sha=sha,
                        node_id=node_id,
                    )
                )
        return merged

    def _remove(self, forked: Mapping[str, WorkspaceSession], merged: Mapping[str, Mapping[str, str]]) -> None:
        """Remove the branches' worktrees and git branches; commits not merged, and what a worktree held
        uncommitted (nothing a stage made: tool stages and agents commit their work), stay under abandoned refs."""
        for path, session in forked.items():
            for repo, context in session.contexts.items():
                git, root = self._git, context.repo_root
                with git.lock(root):
                    tip = git.resolve_commit(root, context.branch_ref)
                    if tip is not None and tip != context.base_sha and repo not in merged.get(path, {}):
                        keep_abandoned(git, root, context.session_id, tip)
                    self._save_uncommitted(context, "join")
                    self._drop_worktree(root, context.worktree_path)
                    git.delete_branch(root, context.branch_name)
                self._remove_empty_parents(context.worktree_path)
            with self._lock:
                self._sessions.pop(path, None)

    def _save_uncommitted(self, context: WorkspaceContext, reason: str) -> None:
        save_uncommitted(self._git, context, reason, self._emit, when=self._clock.now())

    def _drop_worktree(self, root: Path, worktree: Path) -> None:
        """Remove a worktree: moved aside at once (git then forgets it), its files deleted in the background.

        `git worktree remove` deletes file by file before returning (seconds on a large repository); the
        thread is not a daemon, so the process still finishes the deletion before it exits.
        """
        trash = self._dir / f".removed-{uuid.uuid4().hex}"
        try:
            worktree.rename(trash)
        except OSError:
            self._git.worktree_remove(root, worktree)
            return
        self._git.worktree_prune(root)
        threading.Thread(
            target=shutil.rmtree, args=(trash,), kwargs={"ignore_errors": True}, name="orchestra-worktree-removal"
        ).start()

    def _remove_empty_parents(self, worktree: Path) -> None:
        """The branch's directories below the session's worktrees directory, once empty."""
        directory = worktree.parent
        while directory != self._dir and directory.is_relative_to(self._dir):
            try:
                directory.rmdir()
            except OSError:  # not empty (another repo's or a nested branch's worktree), or gone
                return
            directory = directory.parent

    def _merge_message(self, node_id: str, into: WorkspaceContext, branch: WorkspaceContext, path: str) -> str:
        subject = f"Merge parallel branch {path} into {into.branch_name}"
        return with_trailers(subject, self._trailers(node_id, into, path))

    def _trailers(self, node_id: str, context: WorkspaceContext, path: str) -> dict[str, str]:
        return {
            "Orchestra-Node": node_id,
            "Orchestra-Pipeline": self._pipeline or context.pipeline_name,
            "Orchestra-Session": context.session_id,
            MERGE_TRAILER: path,
        }

    def _identity(self) -> Identity:
        return Identity(COMMITTER_NAME, AGENT_EMAIL, self._clock.now())


def branch_worktree_path(worktrees_dir: Path, branch_path: str, repo: str) -> Path:
    """Where a parallel branch's worktree of `repo` lives under a session's worktrees directory (the same on every
    machine)."""
    segments = [
        ":".join(ref_component(part, "node") for part in segment.split(":", 1)) for segment in branch_path.split("/")
    ]
    return worktrees_dir.joinpath(*segments, repo)


def _conflict(
    into: WorkspaceContext, branch: WorkspaceContext, path: str, merged_before: list[str], result: MergeResult
) -> dict[str, Any]:
    hunks = []
    for conflict in result.conflicts[:MAX_HUNKS]:
        text = conflict_hunks(conflict.text)
        if text:
            hunks.append({"file": conflict.path, "text": text})
    return {
        "repo": into.repo_name,
        "branch": branch.branch_name,
        "branch_path": path,
        "into": into.branch_name,
        "branches": [*merged_before, branch.branch_name],
        "files": list(result.conflicted_paths),
        "hunks": hunks,
    }


def conflict_hunks(text: str, limit: int = HUNK_CHARS) -> str:
    """The conflict-marker regions of a file (`<<<<<<<` to `>>>>>>>`), capped at `limit` characters."""
    kept: list[str] = []
    inside = False
    for line in text.splitlines(keepends=True):
        if line.startswith("<<<<<<<"):
            inside = True
        if inside:
            kept.append(line)
        if line.startswith(">>>>>>>"):
            inside = False
    joined = "".join(kept)
    return joined if len(joined) <= limit else joined[:limit] + "\n[... truncated]\n"
