"""Merging parallel branches at fan-in: one merge commit per branch, computed with `merge_tree` (no worktree or
index touched) and landed on the parent's branch only when every merge is clean, or, when the join node routes a
conflict on to another node, with git's conflict markers left in the conflicting files for that node to resolve."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from attrs import field, frozen

from orchestra_core.model.workspace_events import WorkspaceEvent, WorktreeMergeConflict, WorktreeMerged
from orchestra_core.ports.clock import Clock
from orchestra_core.ports.git import Git, GitError, Identity, MergeResult
from orchestra_core.workspace.committer import AGENT_EMAIL, COMMITTER_NAME
from orchestra_core.workspace.context import WorkspaceContext
from orchestra_core.workspace.errors import ProtectedBranchError, WorkspaceError
from orchestra_core.workspace.messages import with_trailers
from orchestra_core.workspace.naming import is_protected
from orchestra_core.workspace.session import WorkspaceSession

MERGE_TRAILER = "Orchestra-Merge"
CONFLICTS_TRAILER = "Orchestra-Conflicts"
HUNK_CHARS = 4_000  # conflict-marker text kept per file in the context
MAX_HUNKS = 20


@frozen
class MergeStep:
    """One parallel branch's part of a join, in one repo.

    Attributes:
        path: The branch path (`fan:left`).
        repo: The workspace repo.
        branch: The branch's git branch.
        base: The commit it was forked from.
        tip: Its head at the join (None: the git branch is gone).
        merge: Whether it is merged (it succeeded); otherwise it is only removed, its commits kept under
            `refs/orchestra/abandoned/...`.
    """

    path: str
    repo: str
    branch: str
    base: str
    tip: str | None
    merge: bool

    @property
    def has_commits(self) -> bool:
        return self.tip is not None and self.tip != self.base

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "repo": self.repo, "branch": self.branch, "base": self.base, "tip": self.tip,
                "merge": self.merge}  # fmt: skip

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> MergeStep:
        """Raises: KeyError, TypeError: not a step's JSON."""
        tip = value["tip"]
        return cls(str(value["path"]), str(value["repo"]), str(value["branch"]), str(value["base"]),
                   None if tip is None else str(tip), bool(value["merge"]))  # fmt: skip


@frozen
class RepoMerge:
    """The merges computed for one repo: its branch from `old` to `new`, and each merged branch's merge commit
    with the files it left conflicted."""

    repo: str
    old: str
    new: str
    commits: tuple[tuple[MergeStep, str, tuple[str, ...]], ...] = ()


@frozen
class MergeReport:
    """How joining a fan-out's branches went.

    Attributes:
        conflicts: Per conflicting branch and repo: `repo`, `branch` (its git branch), `branch_path`,
            `into` (the parent's git branch), `branches` (the git branches merged before it, then it),
            `files`, `hunks` (`{file, text}` with the conflict-marker regions, capped), `ours` and `theirs`
            (the two commits merged, as the markers name them); once landed also `commit` (the merge commit
            holding the markers).
        merged: Branch path -> repo -> merge commit, for the branches that were merged.
        branches: The branch paths that had worktrees (none: the join had nothing to do).
        pending: With conflicts not landed: what `BranchWorktrees.land_conflicts` needs (plain JSON).
        landed: The conflicts were committed with their markers (`BranchWorktrees.land_conflicts`).
    """

    conflicts: tuple[dict[str, Any], ...] = ()
    merged: Mapping[str, Mapping[str, str]] = field(factory=dict)
    branches: tuple[str, ...] = ()
    pending: Mapping[str, Any] = field(factory=dict)
    landed: bool = False

    @property
    def failed(self) -> bool:
        return bool(self.conflicts) and not self.landed

    def summary(self) -> str:
        """A readable account: the conflicts with their hunks (and where they were committed), else what was
        merged."""
        if not self.conflicts:
            merged = ", ".join(f"{path} ({', '.join(sorted(repos))})" for path, repos in self.merged.items())
            return f"merged {merged}" if merged else "no branch had commits to merge"
        lines = []
        if self.landed:
            where = "; ".join(
                f"{c['repo']}: {', '.join(c['files'])} in {c['commit'][:12]} on {c['into']}"
                for c in self.conflicts
                if c.get("commit")
            )
            lines.append(
                f"The merge is committed with git's conflict markers left in the conflicting files ({where}). "
                "Resolve each conflict by editing the file: keep what both sides meant and remove the <<<<<<<, "
                "======= and >>>>>>> lines."
            )
        for conflict in self.conflicts:
            lines.append(
                f"{conflict['repo']}: merging {conflict['branch']} ({conflict['branch_path']}) into "
                f"{conflict['into']} conflicts in {', '.join(conflict['files'])} (the markers name "
                f"{conflict['into']} as {conflict['ours']} and {conflict['branch']} as {conflict['theirs']})"
            )
            for hunk in conflict["hunks"]:
                lines.append(f"--- {hunk['file']}\n{hunk['text']}")
        return "\n".join(lines)


class FanInMerger:
    """Computes and lands the merges of a join (thread-safe: each call works on its own commits)."""

    def __init__(self, git: Git, clock: Clock, pipeline_name: str, emit: Callable[[WorkspaceEvent], None]) -> None:
        self._git = git
        self._clock = clock
        self._pipeline = pipeline_name
        self._emit = emit

    def merge(
        self, node_id: str, into: WorkspaceContext, steps: Sequence[MergeStep], *, keep_markers: bool, next_node: str = ""
    ) -> tuple[RepoMerge, list[dict[str, Any]]]:
        """Merge the branches of `steps` to merge, in order, into `into`'s head: one merge commit each (nothing
        lands yet). A conflicting branch is left out, unless `keep_markers`: then its merge is committed as git
        computed it, conflict markers in the files, naming `next_node` as the one to resolve them.

        Raises:
            WorkspaceError: `into`'s branch is gone.
        """
        git, root = self._git, into.repo_root
        old = git.resolve_commit(root, into.branch_ref)
        if old is None:
            raise WorkspaceError(f"{into.repo_name}: branch {into.branch_name} no longer exists")
        head = old
        commits: list[tuple[MergeStep, str, tuple[str, ...]]] = []
        merged_names: list[str] = []
        conflicts: list[dict[str, Any]] = []
        for step in steps:
            if not step.merge or not step.has_commits or step.tip is None:
                continue
            result = git.merge_tree(root, head, step.tip)
            files = () if result.clean else result.conflicted_paths
            if files:
                conflicts.append(conflict_record(into, step, merged_names, head, result))
                if not keep_markers:
                    continue
            message = self._message(node_id, into, step, files, next_node)
            identity = Identity(COMMITTER_NAME, AGENT_EMAIL, self._clock.now())
            head = git.commit_tree(
                root, result.tree, parents=[head, step.tip], message=message, author=identity, committer=identity
            )
            if files:
                conflicts[-1]["commit"] = head
            commits.append((step, head, files))
            merged_names.append(step.branch)
        return RepoMerge(into.repo_name, old, head, tuple(commits)), conflicts

    def land(self, node_id: str, base: WorkspaceSession, merges: Sequence[RepoMerge]) -> dict[str, dict[str, str]]:
        """Move each repo's branch to its merged head (expected old head) and bring its worktree along; a
        `WorktreeMerged` event per merged branch. Returns branch path -> repo -> merge commit.

        Raises:
            ProtectedBranchError: The branch is protected.
            WorkspaceError: git failed (or the branch moved meanwhile).
        """
        merged: dict[str, dict[str, str]] = {}
        for plan in merges:
            if plan.old == plan.new:
                continue
            into = base.contexts[plan.repo]
            if is_protected(into.branch_name, base.protected_branches(plan.repo)):
                raise ProtectedBranchError(f"{plan.repo}: refusing to move protected branch {into.branch_name!r}")
            try:
                with self._git.lock(into.repo_root):
                    self._git.update_ref(into.repo_root, into.branch_ref, plan.new, expected_old=plan.old)
                    self._git.checkout_tree(into.worktree_path, plan.old, plan.new)
            except GitError as error:
                raise WorkspaceError(f"{plan.repo}: could not land the merge on {into.branch_name}: {error}") from error
            base.note_head(plan.repo, plan.new)
            for step, sha, files in plan.commits:
                merged.setdefault(step.path, {})[plan.repo] = sha
                self._emit(
                    WorktreeMerged(
                        session_id=into.session_id, repo=plan.repo, branch=step.branch, into_branch=into.branch_name,
                        merge_sha=sha, node_id=node_id, conflicting_files=files,
                    )
                )  # fmt: skip
        return merged

    def report_conflicts(self, node_id: str, session_id: str, conflicts: Sequence[Mapping[str, Any]]) -> None:
        """A `WorktreeMergeConflict` warning per conflicting branch and repo."""
        for conflict in conflicts:
            self._emit(
                WorktreeMergeConflict(
                    session_id=session_id, repo=conflict["repo"], branch=conflict["branch"],
                    into_branch=conflict["into"], conflicting_files=conflict["files"], node_id=node_id,
                    detail=f"parallel branch {conflict['branch_path']}",
                )
            )  # fmt: skip

    def _message(
        self, node_id: str, into: WorkspaceContext, step: MergeStep, conflicted: Sequence[str], next_node: str
    ) -> str:
        subject = f"Merge parallel branch {step.path} into {into.branch_name}"
        trailers = self.trailers(node_id, into, step.path)
        if not conflicted:
            return with_trailers(subject, trailers)
        files = ", ".join(conflicted)
        body = (
            f"git could not merge {files}. This commit holds the merge as git computed it, with its conflict "
            f"markers (<<<<<<<, =======, >>>>>>>) left in those files for {next_node or 'the next node'} to "
            "resolve; the resolution follows in later commits."
        )
        trailers[CONFLICTS_TRAILER] = files
        return with_trailers(f"{subject}, conflicts left for resolution\n\n{body}", trailers)

    def trailers(self, node_id: str, context: WorkspaceContext, path: str) -> dict[str, str]:
        """The trailers of a commit Orchestra makes for parallel branch `path` of fan-out `node_id`."""
        return {
            "Orchestra-Node": node_id,
            "Orchestra-Pipeline": self._pipeline or context.pipeline_name,
            "Orchestra-Session": context.session_id,
            MERGE_TRAILER: path,
        }


def conflict_record(
    into: WorkspaceContext, step: MergeStep, merged_before: Sequence[str], ours: str, result: MergeResult
) -> dict[str, Any]:
    """A conflict as `workspace.merge_conflicts` lists it (`ours`: the head merged into, which the conflict
    markers name, as they name the branch's head)."""
    hunks = []
    for conflict in result.conflicts[:MAX_HUNKS]:
        text = conflict_hunks(conflict.text)
        if text:
            hunks.append({"file": conflict.path, "text": text})
    return {
        "repo": into.repo_name,
        "branch": step.branch,
        "branch_path": step.path,
        "into": into.branch_name,
        "branches": [*merged_before, step.branch],
        "files": list(result.conflicted_paths),
        "hunks": hunks,
        "ours": ours,
        "theirs": step.tip,
    }


def conflict_hunks(text: str, limit: int = HUNK_CHARS) -> str:
    """The conflict-marker regions of a file (`<<<<<<<` to `>>>>>>>`), capped at `limit` characters."""
    kept: list[str] = []
    depth = 0  # markers nest when a file conflicted again in a later branch's merge
    for line in text.splitlines(keepends=True):
        if line.startswith("<<<<<<<"):
            depth += 1
        if depth:
            kept.append(line)
        if line.startswith(">>>>>>>") and depth:
            depth -= 1
    joined = "".join(kept)
    return joined if len(joined) <= limit else joined[:limit] + "\n[... truncated]\n"
