"""Parallel branches' worktrees: each writing branch works on its own git branch and worktree, forked from
its parent's head; at the join the branches are merged back (`fan_in_merge`: nothing touched on conflict, unless
the join routes the conflict on, which lands it with its markers).

A branch whose nodes only use Orchestra's own file tools gets a lazy worktree (`Git.worktree_add_lazy`: no file
written until an agent writes it, the others read from git's objects); one that runs commands or a CLI agent gets
a full checkout, and a lazy one becomes full (`materialize`) when a node turns out to need a shell."""

from __future__ import annotations

import shutil
import threading
import uuid
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from attrs import evolve

from orchestra_core.model.workspace_events import WorkspaceEvent, WorktreeCreated
from orchestra_core.ports.clock import Clock
from orchestra_core.ports.git import Git, GitError, Identity
from orchestra_core.workspace.abandoned import keep_abandoned
from orchestra_core.workspace.committer import AGENT_EMAIL, COMMITTER_NAME
from orchestra_core.workspace.context import WORKTREE, WorkspaceContext
from orchestra_core.workspace.errors import WorkspaceError
from orchestra_core.workspace.fan_in_merge import FanInMerger, MergeReport, MergeStep, RepoMerge
from orchestra_core.workspace.naming import free_branch_name, ref_component
from orchestra_core.workspace.session import WorkspaceSession
from orchestra_core.workspace.uncommitted import save_uncommitted
from orchestra_core.workspace.worktree_include import copy_included_files

__all__ = ["BranchWorktrees", "MergeReport", "branch_worktree_path"]


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
        self._merger = FanInMerger(git, clock, pipeline_name, emit)

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

    def fork(self, node_id: str, parent: str | None, paths: Sequence[str], lazy: Collection[str] = ()) -> None:
        """Give each branch in `paths` a fresh branch and worktree per repo, from the parent's current head.

        The branches in `lazy` get lazy worktrees (files written only as agents write them; their tools read
        the others from git's objects), the others full checkouts. A branch left by an earlier run of the node
        (a retry, a loop, a resume) is removed first; its commits stay reachable under
        `refs/orchestra/abandoned/<session>/<n>`.

        Raises:
            WorkspaceError: git failed (the worktrees made so far stay; the next fork replaces them).
        """
        base = self.session_for(parent)
        taken: set[str] = set()
        for path in paths:
            contexts, tree_files = [], {}
            for repo, context in base.contexts.items():
                try:
                    forked = self._fork_repo(node_id, path, context, taken, lazy=path in lazy)
                    files = self._git.tree_files(forked.worktree_path) if path in lazy else None
                except GitError as error:
                    raise WorkspaceError(f"{repo}: could not create the worktree of branch {path}: {error}") from error
                contexts.append(forked)
                if files is not None:
                    tree_files[repo] = files
            with self._lock:
                replaced = self._sessions.get(path)
                self._sessions[path] = base.child(contexts, tree_files)
            if replaced is not None:
                replaced.close()

    def materialize(self, branch: str | None) -> tuple[str, ...]:
        """Make the lazy worktrees `branch`'s nodes work in full checkouts (a node is about to run a command or
        a CLI agent there; on the main line, the session's own worktrees when they were made lazy); returns the
        repos that were lazy.

        Raises:
            WorkspaceError: git failed.
        """
        return self.session_for(branch).materialize()

    def close(self) -> None:
        """End the git processes that read lazy worktrees' files (the worktrees stay; reading restarts them)."""
        for session in self.sessions():
            session.close()

    def _fork_repo(
        self, node_id: str, path: str, parent: WorkspaceContext, taken: set[str], *, lazy: bool = False
    ) -> WorkspaceContext:
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
            if lazy:
                git.worktree_add_lazy(root, worktree, name)
            else:
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
        held uncommitted, stay under `refs/orchestra/abandoned/...`). On a conflict nothing moves, every worktree
        is kept, and the report's `pending` says what `land_conflicts` needs to commit the merge with its markers
        later.
        """
        base = self.session_for(parent)
        with self._lock:
            forked = {path: self._sessions[path] for path in paths if path in self._sessions}
        if not forked:
            return MergeReport()
        steps = self._steps(forked, merge)
        merges, conflicts = self._merge(node_id, base, steps, keep_markers=False)
        if conflicts:
            self._merger.report_conflicts(node_id, base.session_id, conflicts)
            pending = {
                "into": {repo: context.branch_name for repo, context in base.contexts.items()},
                "steps": [step.to_json() for step in steps],
            }
            return MergeReport(conflicts=tuple(conflicts), branches=tuple(forked), pending=pending)
        merged = self._merger.land(node_id, base, merges)
        self._remove(base, steps, merged)
        return MergeReport(merged=merged, branches=tuple(forked))

    def land_conflicts(
        self, node_id: str, parent: str | None, pending: Mapping[str, Any], next_node: str
    ) -> MergeReport:
        """Commit a conflicted join (`pending`: its `MergeReport.pending`) on the parent's branch, one merge commit
        per branch as git computes it, conflict markers left in the files for `next_node`; check it out in the
        parent's worktree and remove the branches' worktrees and git branches (their commits stay reachable
        through the merges). Works from the recorded commits, so also in a resumed run, where the branch was put
        back at the checkpoint's head and the worktrees may be gone already.

        Raises:
            WorkspaceError: `pending` does not fit this run, or git failed.
        """
        base = self.session_for(parent)
        try:
            steps = [MergeStep.from_json(value) for value in pending["steps"]]
            into = {str(repo): str(name) for repo, name in pending["into"].items()}
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise WorkspaceError(f"the pending merge of {node_id} is not one Orchestra recorded: {error!r}") from error
        for repo, name in into.items():
            context = base.contexts.get(repo)
            if context is None or context.branch_name != name:
                raise WorkspaceError(f"{repo}: the merge at fan-in of {node_id} was to go into {name}, not worked on here")
        merges, conflicts = self._merge(node_id, base, steps, keep_markers=True, next_node=next_node)
        merged = self._merger.land(node_id, base, merges)
        self._remove(base, steps, merged)
        paths = tuple(dict.fromkeys(step.path for step in steps))
        return MergeReport(conflicts=tuple(conflicts), merged=merged, branches=paths, landed=True)

    def _steps(self, forked: Mapping[str, WorkspaceSession], merge: Collection[str]) -> list[MergeStep]:
        steps = []
        for path, session in forked.items():
            for repo, context in session.contexts.items():
                tip = self._git.resolve_commit(context.repo_root, context.branch_ref)
                steps.append(MergeStep(path, repo, context.branch_name, context.base_sha, tip, path in merge))
        return steps

    def _merge(
        self, node_id: str, base: WorkspaceSession, steps: Sequence[MergeStep], *, keep_markers: bool, next_node: str = ""
    ) -> tuple[list[RepoMerge], list[dict[str, Any]]]:
        merges: list[RepoMerge] = []
        conflicts: list[dict[str, Any]] = []
        for repo, context in base.contexts.items():
            mine = [step for step in steps if step.repo == repo]
            merged, found = self._merger.merge(node_id, context, mine, keep_markers=keep_markers, next_node=next_node)
            merges.append(merged)
            conflicts += found
        return merges, conflicts

    def _remove(self, base: WorkspaceSession, steps: Sequence[MergeStep], merged: Mapping[str, Mapping[str, str]]) -> None:
        """Remove the branches' worktrees and git branches (those already gone are skipped); commits not merged,
        and what a worktree held uncommitted (nothing a stage made: tool stages and agents commit their work),
        stay under abandoned refs."""
        git = self._git
        with self._lock:
            removed = {step.path: self._sessions.get(step.path) for step in steps}
        for session in removed.values():
            if session is not None:
                session.close()  # its readers of git's objects end before the worktrees go
        for step in steps:
            context = base.contexts.get(step.repo)
            if context is None:
                continue
            root, worktree = context.repo_root, self.worktree_path(step.path, step.repo)
            kept = {step.base, *([step.tip] if step.repo in merged.get(step.path, {}) else [])}
            with git.lock(root):
                tip = git.resolve_commit(root, f"refs/heads/{step.branch}")
                if tip is not None and tip not in kept:
                    keep_abandoned(git, root, context.session_id, tip)
                self._save_uncommitted(evolve(context, worktree_path=worktree, branch_name=step.branch), "join")
                self._drop_worktree(root, worktree)
                if tip is not None:
                    git.delete_branch(root, step.branch)
            self._remove_empty_parents(worktree)
        with self._lock:
            for step in steps:
                self._sessions.pop(step.path, None)

    def _save_uncommitted(self, context: WorkspaceContext, reason: str) -> None:
        save_uncommitted(self._git, context, reason, self._emit, when=self._clock.now())

    def _drop_worktree(self, root: Path, worktree: Path) -> None:
        """Remove a worktree: moved aside at once (git then forgets it), its files deleted in the background.

        `git worktree remove` deletes file by file before returning (seconds on a large repository); the
        thread is not a daemon, so the process still finishes the deletion before it exits.
        """
        if not worktree.exists():  # removed already (a resumed run lands a merge the killed one had landed)
            self._git.worktree_prune(root)
            return
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


    def _trailers(self, node_id: str, context: WorkspaceContext, path: str) -> dict[str, str]:
        return self._merger.trailers(node_id, context, path)

    def _identity(self) -> Identity:
        return Identity(COMMITTER_NAME, AGENT_EMAIL, self._clock.now())


def branch_worktree_path(worktrees_dir: Path, branch_path: str, repo: str) -> Path:
    """Where a parallel branch's worktree of `repo` lives under a session's worktrees directory (the same on every
    machine)."""
    segments = [
        ":".join(ref_component(part, "node") for part in segment.split(":", 1)) for segment in branch_path.split("/")
    ]
    return worktrees_dir.joinpath(*segments, repo)
