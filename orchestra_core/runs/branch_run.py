"""One parallel branch run by a worker for the runner of its session (docs/fleet.md): the branch's git branch
fetched from the remote into a worktree here, its nodes walked as the session's runner would have walked them, its
turns recorded into the branch's own session, its commits pushed back to the remote."""

from __future__ import annotations

from contextlib import suppress
from pathlib import Path

from attrs import evolve

from orchestra_core.graph.fan_out import branch_edges
from orchestra_core.model.cancellation import Cancellation
from orchestra_core.model.context import Context
from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.graph import Edge, Graph
from orchestra_core.model.layout import ProjectLayout
from orchestra_core.model.settings import RepoSettings
from orchestra_core.ports.git import Git
from orchestra_core.ports.git_remotes import GitRemotes
from orchestra_core.runs.extensions import Extensions
from orchestra_core.runs.fleet_payloads import BranchAssignment, BranchOutcome, BranchRepo
from orchestra_core.runs.pipeline_run import PipelineRun
from orchestra_core.runs.ports import RunOptions, RunPorts
from orchestra_core.runs.start import RESUME, SessionStart
from orchestra_core.runs.watchers import RunWatchers
from orchestra_core.session.checkpoints import PipelineSource
from orchestra_core.session.recorder import SessionRecorder
from orchestra_core.workspace.abandoned import keep_abandoned
from orchestra_core.workspace.branches import BranchWorktrees, branch_worktree_path
from orchestra_core.workspace.context import WORKTREE, WorkspaceContext
from orchestra_core.workspace.naming import ref_component
from orchestra_core.workspace.session import WorkspaceSession
from orchestra_core.workspace.setup import configured_path
from orchestra_core.workspace.state_dir import exclude_state_dir
from orchestra_core.workspace.uncommitted import save_uncommitted
from orchestra_core.workspace.worktree_include import copy_included_files


class BranchRun(PipelineRun):
    """A PipelineRun of one branch: its lock is the branch's session's (the session's own stays with its runner),
    its workspace the branch's git branches, its recorder writes the branch's session; `run_branch()` walks it.

    Creating it takes the branch session's lock (SessionBusyError: another runner has the branch); `close()` removes
    the worktrees it made (their commits were pushed, or are kept under `refs/orchestra/abandoned/...`).
    """

    def __init__(
        self,
        graph: Graph,
        assignment: BranchAssignment,
        ports: RunPorts,
        options: RunOptions,
        extensions: Extensions | None = None,
    ) -> None:
        self.assignment = assignment
        self._created: list[WorkspaceContext] = []
        self._fetched: dict[str, str] = {}
        if not options.logs_root:  # the stages write where the session's run directory would be on this machine
            run_dir = ProjectLayout(options.project_root.resolve()).run_dir(assignment.session_id)
            options = evolve(options, logs_root=str(run_dir))
        source = PipelineSource(assignment.pipeline_path, assignment.pipeline_blob)
        super().__init__(graph, SessionStart(RESUME, assignment.line, "", source), ports, options, extensions)

    def _watchers(self, *, created: bool) -> RunWatchers:
        """None: the session's own runner tells how the run goes (one branch is no end of it), and its trace has
        the branch's span, without stages (a branch a worker runs is not traced yet)."""
        return RunWatchers()

    def budget_session(self) -> str:
        """The budgets bound the spending of the session the branch belongs to (all its branches included)."""
        return self.assignment.session_id

    def _recorder(self) -> SessionRecorder:
        recorder = super()._recorder()
        assert isinstance(recorder, SessionRecorder), "a branch run records into the store"
        recorder.use_lines({None: self.assignment.line, self.assignment.branch: self.assignment.line})
        return recorder

    # the workspace --------------------------------------------------------------------------------------
    def open_workspace(self) -> WorkspaceSession | None:
        """The branch's git branch of every repo, fetched from the remote, in a worktree here at its fork point."""
        git, remotes = self.ports.git, self.ports.git_remotes
        if git is not None:
            exclude_state_dir(git, self.layout.root)
        if not self.assignment.repos:
            return None
        if git is None or remotes is None:
            raise OrchestraError("a parallel branch with workspace repos needs the git and git remotes ports")
        directory = self.layout.worktrees_dir / ref_component(self.assignment.session_id, "session")
        contexts = [
            self._branch_context(name, repo, git, remotes, directory) for name, repo in self.assignment.repos.items()
        ]
        settings = self.options.settings.workspace.repos
        self.workspace = WorkspaceSession(
            self.assignment.session_id, contexts, {c.repo_name: settings[c.repo_name] for c in contexts}, git,
            self.ports.clock, self.commit_messages, self._on_workspace_event,
        )  # fmt: skip
        self.branches = BranchWorktrees(
            self.workspace, git, self.ports.clock, directory, self.pipeline_name, self._on_workspace_event
        )
        return self.workspace

    def _branch_context(self, name: str, repo: BranchRepo, git: Git, remotes: GitRemotes, directory: Path) -> WorkspaceContext:
        settings = self._repo_settings(name, repo)
        root = configured_path(settings, self.options.settings.base_dir)
        fetched = remotes.fetch_branch(root, repo.remote, repo.branch)
        if fetched is None or git.resolve_commit(root, repo.base_sha) is None:
            raise OrchestraError(
                f"{name}: parallel branch {self.assignment.branch} is not on the remote (branch {repo.branch} at "
                f"{repo.base_sha}); its session's runner pushes it before it sends the branch"
            )
        self._fetched[name] = fetched
        worktree = branch_worktree_path(directory, self.assignment.branch, name)
        context = WorkspaceContext(
            repo_name=name, repo_root=root, worktree_path=worktree, branch_name=repo.branch, base_ref=repo.base_sha,
            base_sha=repo.base_sha, head_sha=repo.base_sha, session_id=self.assignment.session_id,
            pipeline_name=self.pipeline_name, isolation=WORKTREE, created_at=self.ports.clock.now(),
        )  # fmt: skip
        with git.lock(root):
            if self._reuse(git, context):
                return context
            self._discard(git, context)
            git.create_branch(root, repo.branch, repo.base_sha)
            worktree.parent.mkdir(parents=True, exist_ok=True)
            git.worktree_add(root, worktree, repo.branch)
            self._created.append(context)
        copy_included_files(git, root, worktree, self._on_workspace_event, session_id=context.session_id, repo=name)
        return context

    def _repo_settings(self, name: str, repo: BranchRepo) -> RepoSettings:
        settings = self.options.settings.workspace.repos.get(name)
        if settings is None:
            raise OrchestraError(
                f"this worker has no workspace repo {name!r} (workspace.repos.{name} in its orchestra.yaml, with "
                f"remote {repo.remote}), which parallel branch {self.assignment.branch} works in"
            )
        if settings.remote != repo.remote:
            raise OrchestraError(
                f"workspace.repos.{name}.remote is {settings.remote!r} here, not {repo.remote!r} as for the session's "
                "runner"
            )
        return settings

    def _reuse(self, git: Git, context: WorkspaceContext) -> bool:
        """The worktree is here already (this machine's project also runs the session, or ran the branch before):
        its branch goes back to the fork point, a head left beyond it (and what it held uncommitted) kept under
        abandoned refs."""
        root = context.repo_root
        git.worktree_prune(root)
        listed = [w for w in git.worktrees(root) if w.path.resolve() == context.worktree_path.resolve()]
        if not listed or listed[0].branch != context.branch_name:
            return False
        head = git.resolve_commit(root, context.branch_ref)
        if head is not None and head != context.base_sha:
            keep_abandoned(git, root, context.session_id, head)
        self._save_uncommitted(git, context)
        git.discard_changes(context.worktree_path, context.base_sha)
        return True

    def _discard(self, git: Git, context: WorkspaceContext) -> None:
        """A worktree or branch of that name left by an earlier run goes (its commits, and what it held uncommitted,
        kept under abandoned refs)."""
        root = context.repo_root
        for listed in git.worktrees(root):
            if listed.path.resolve() == context.worktree_path.resolve() or listed.branch == context.branch_name:
                self._save_uncommitted(git, evolve(context, worktree_path=listed.path))
                git.worktree_remove(root, listed.path)
        if context.worktree_path.exists():
            raise OrchestraError(f"{context.repo_name}: {context.worktree_path} exists but is not a worktree of {root}")
        old = git.resolve_commit(root, context.branch_ref)
        if old is not None:
            if old != context.base_sha:
                keep_abandoned(git, root, context.session_id, old)
            git.delete_branch(root, context.branch_name)

    def _save_uncommitted(self, git: Git, context: WorkspaceContext) -> None:
        save_uncommitted(git, context, "fork", self._on_workspace_event, when=self.ports.clock.now())

    # running --------------------------------------------------------------------------------------------
    def run_branch(self, stop: Cancellation) -> BranchOutcome:
        """Walk the branch to its join (or until `stop`), then push what it committed and record what waits.

        Raises:
            OrchestraError: The branch is not in this pipeline, or its commits could not be pushed.
        """
        if self.engine is None:
            self.open()
        assert self.engine is not None
        start = self._start_edge()
        result = self.engine.run_branch(
            self.graph, session_id=self.assignment.session_id, logs_root=self.logs_root, start=start,
            context=Context(dict(self.assignment.context)), branch=self.assignment.branch,
            stop_at=self.assignment.stop_at, stage_keys=self.assignment.stage_keys, visited=self.assignment.visited,
            stop=stop, single=self.assignment.single,
        )  # fmt: skip
        heads = self._push() if not stop.is_set() else {}
        self.recorder.flush()
        return BranchOutcome(result=result, heads=heads)

    def _start_edge(self) -> Edge:
        if self.assignment.single:
            return self._node_edge()
        node = self.graph.nodes.get(self.assignment.node)
        edges = branch_edges(self.graph, node) if node is not None else ()
        found = edges[self.assignment.edge] if 0 <= self.assignment.edge < len(edges) else None
        if found is None or f"{found.source}:{found.target}" != self.assignment.branch:
            raise OrchestraError(f"parallel branch {self.assignment.branch} is not in pipeline {self.pipeline_name}")
        return found

    def _node_edge(self) -> Edge:
        """A main-line node's task: the edge that led to the node (one to itself when none did)."""
        edges, index, node_id = self.graph.edges, self.assignment.edge, self.assignment.node
        if node_id not in self.graph.nodes:
            raise OrchestraError(f"node {node_id} is not in pipeline {self.pipeline_name}")
        edge = edges[index] if 0 <= index < len(edges) else Edge(node_id, node_id)
        if edge.target != node_id:
            raise OrchestraError(f"edge {index} of pipeline {self.pipeline_name} does not lead to node {node_id}")
        return edge

    def _push(self) -> dict[str, str]:
        """Push each repo's branch (leased on what was fetched): the branch's stages committed their work."""
        if self.workspace is None or self.branches is None:
            return {}
        heads = self.workspace.snapshot()
        assert self.ports.git_remotes is not None
        for name, sha in heads.items():
            repo = self.assignment.repos[name]
            if sha != self._fetched[name]:
                context = self.workspace.contexts[name]
                self.ports.git_remotes.push(
                    context.repo_root, repo.remote, sha, repo.branch, expected_remote_sha=self._fetched[name]
                )
                self._fetched[name] = sha  # what the remote holds now
        return heads

    def close(self) -> None:
        """Release what the run holds, then remove the worktrees it made (their commits are on the remote, or
        kept under an abandoned ref, as is what they held uncommitted)."""
        try:
            super().close()
        finally:
            git = self.ports.git
            for context in self._created if git is not None else []:
                assert git is not None
                with suppress(Exception), git.lock(context.repo_root):
                    head = git.resolve_commit(context.repo_root, context.branch_ref)
                    if head is not None and head != self._fetched.get(context.repo_name, context.base_sha):
                        keep_abandoned(git, context.repo_root, context.session_id, head)
                    # the recorder is closed: the warning goes to the run's observers only
                    save_uncommitted(git, context, "close", self.events.deliver, when=self.ports.clock.now())
                    git.worktree_remove(context.repo_root, context.worktree_path)
                    git.delete_branch(context.repo_root, context.branch_name)
            self._created = []


__all__ = ["BranchRun"]
