"""WorkspaceManager: validates `workspace.repos` and opens a session's branches and worktrees."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from attrs import evolve

from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.layout import ProjectLayout
from orchestra_core.model.settings import WorkspaceSettings
from orchestra_core.model.workspace_events import ProjectLinkFailed, WorkspaceEvent, WorkspaceRestored
from orchestra_core.ports.clock import Clock
from orchestra_core.ports.commit_messages import CommitMessageGenerator
from orchestra_core.ports.git import Git, GitError
from orchestra_core.workspace.context import IN_PLACE, WorkspaceContext
from orchestra_core.workspace.errors import WorkspaceConfigError, WorkspaceError
from orchestra_core.workspace.naming import ref_component
from orchestra_core.workspace.projects import link_project
from orchestra_core.workspace.session import WorkspaceSession
from orchestra_core.workspace.setup import BranchCreator, RepoChecker, configured_path
from orchestra_core.workspace.state_dir import exclude_state_dir
from orchestra_core.workspace.worktree_include import copy_included_files


class WorkspaceManager:
    """Sets up (or reopens) the session branches of a run in every workspace repo.

    The engine never sees this class: the CLI calls `setup_session` before the run and hands the
    session's `on_turn_wrapper()` to codergen nodes (seed 002, hybrid design).
    """

    def __init__(
        self,
        settings: WorkspaceSettings,
        git: Git,
        clock: Clock,
        project_root: Path,
        *,
        config_dir: Path | None = None,
        commit_messages: CommitMessageGenerator | None = None,
        on_event: Callable[[WorkspaceEvent], None] | None = None,
    ) -> None:
        """Create a manager.

        Args:
            settings: `workspace:` from orchestra.yaml.
            git: The Git port.
            clock: Source of `created_at` and commit dates.
            project_root: Holds the state directory `.orchestra/` (worktrees go in `.orchestra/worktrees/`).
            config_dir: What relative repo paths are relative to (the orchestra.yaml directory);
                defaults to `project_root`.
            commit_messages: Writes per-turn commit messages; without one the fallback message is used.
            on_event: Receives workspace events (branch created, commits, warnings).
        """
        self._settings = settings
        self._git = git
        self._clock = clock
        self._project_root = Path(project_root).resolve()
        self._config_dir = Path(config_dir).resolve() if config_dir is not None else self._project_root
        self._commit_messages = commit_messages
        self._emit = on_event or (lambda event: None)

    @property
    def state_dir(self) -> Path:
        return ProjectLayout(self._project_root).state_dir

    def worktrees_dir(self, session_id: str) -> Path:
        """Where the session's worktrees live: `<project>/.orchestra/worktrees/<session-id>/`."""
        return ProjectLayout(self._project_root).worktrees_dir / ref_component(session_id, "session")

    def in_place_checkouts(self) -> list[Path]:
        """The real paths of the repos a run works in place in (`isolation: in_place`): the checkouts that only
        one run at a time may use (CheckoutLocks)."""
        return [
            configured_path(repo, self._config_dir)
            for repo in self._settings.repos.values()
            if repo.isolation == IN_PLACE
        ]

    def setup_session(
        self,
        session_id: str,
        pipeline_name: str,
        *,
        check_cheap_model: Callable[[], None] | None = None,
        lazy: bool = False,
    ) -> WorkspaceSession:
        """Check every repo, then create a session branch (and worktree) in each.

        Args:
            session_id: The run's session id (its first 8 letters/digits name the branch).
            pipeline_name: The pipeline's name (the branch's middle part).
            check_cheap_model: Raises when the `cheap` model alias (commit messages) cannot be resolved;
                called only when there are repos to commit to.
            lazy: Make the worktrees lazy (`Git.worktree_add_lazy`: no file written; agents' tools read the
                others from git's objects) for a run whose nodes all read files through Orchestra's own tools;
                `WorkspaceSession.materialize` makes them full checkouts. In-place repos are never lazy.

        Raises:
            WorkspaceConfigError: A repo is unusable (every problem listed); nothing was created.
            OrchestraError: `check_cheap_model` failed; nothing was created.
            WorkspaceError: Creating a branch or worktree failed; what was created is removed again.
        """
        checker = RepoChecker(self._git, self._config_dir, self.state_dir)
        plans = checker.plans(self._settings.repos, self.worktrees_dir(session_id), pipeline_name, session_id)
        if plans and check_cheap_model is not None:
            self._check_cheap_model(check_cheap_model)
        self.exclude_state_dir([plan.repo_root for plan in plans])
        contexts = BranchCreator(self._git, self._clock, self._emit, lazy=lazy).create_all(
            plans, session_id, pipeline_name
        )
        self._link_project(contexts)
        return self._session(session_id, contexts)

    def check_repos(self, pipeline_name: str, *, check_cheap_model: Callable[[], None] | None = None) -> None:
        """What `setup_session` checks first, without creating anything: for a run before its session exists.

        Raises:
            WorkspaceConfigError: A repo is unusable (every problem listed).
            OrchestraError: `check_cheap_model` failed.
        """
        checker = RepoChecker(self._git, self._config_dir, self.state_dir)
        placeholder = "0"  # no session id yet; the checks do not depend on it
        plans = checker.plans(self._settings.repos, self.worktrees_dir(placeholder), pipeline_name, placeholder)
        if plans and check_cheap_model is not None:
            self._check_cheap_model(check_cheap_model)

    def exclude_state_dir(self, repo_roots: Sequence[Path] = ()) -> None:
        """Add `.orchestra/` to `info/exclude` of every repository it lies in (the project's own included).

        Keeps worktrees, run logs and the store out of `git status`; idempotent.
        """
        exclude_state_dir(self._git, self._project_root, repo_roots)

    def reopen_session(self, contexts: Sequence[WorkspaceContext]) -> WorkspaceSession:
        """Continue a recorded session (resume): its branches must exist; missing worktrees are recreated.

        Raises:
            WorkspaceError: A repo is no longer configured, its branch is gone, or its checkout is unusable.
        """
        current = []
        for context in contexts:
            if context.repo_name not in self._settings.repos:
                raise WorkspaceError(
                    f"workspace.repos.{context.repo_name}: the session uses it but it is not configured"
                )
            head = self._git.resolve_commit(context.repo_root, context.branch_ref)
            if head is None:
                raise WorkspaceError(
                    f"{context.repo_name}: session branch {context.branch_name} no longer exists"
                )
            # In place, what the checkout was on before this run (rollback on failure returns it there).
            before = self._git.current_branch(context.repo_root) if context.isolation == IN_PLACE else None
            try:
                self._reattach(context)
            except GitError as error:
                raise WorkspaceError(
                    f"{context.repo_name}: cannot reopen {context.worktree_path}: {error}"
                ) from error
            original = before if before not in (None, context.branch_name) else context.original_checkout
            current.append(evolve(context.with_head(head), original_checkout=original or ""))
        self._link_project(current)
        return self._session(contexts[0].session_id if contexts else "", current)

    def reopen_from_start(self, contexts: Sequence[WorkspaceContext]) -> WorkspaceSession:
        """A session started again from the beginning: its recorded branches (made again at their recorded base
        where they are gone), as `reopen_session` reopens them.

        Raises:
            WorkspaceError: A branch cannot be made again, or `reopen_session` failed.
        """
        from orchestra_core.workspace.start_again import recreate_branches

        try:
            recreate_branches(self._git, contexts)
        except GitError as error:
            raise WorkspaceError(f"cannot make a recorded session branch again: {error}") from error
        return self.reopen_session(contexts)

    def setup_from_start(
        self,
        session_id: str,
        pipeline_name: str,
        *,
        check_cheap_model: Callable[[], None] | None = None,
        lazy: bool = False,
    ) -> WorkspaceSession:
        """A session that recorded no branch started again from the beginning: what its stopped run made without
        recording it is removed (see `start_again`), then the session is set up as a new one (`setup_session`)."""
        from orchestra_core.workspace.start_again import discard_unrecorded

        discard_unrecorded(
            self._git, self._settings.repos, self._config_dir, self.worktrees_dir(session_id), session_id, self._emit
        )
        return self.setup_session(session_id, pipeline_name, check_cheap_model=check_cheap_model, lazy=lazy)

    def recorded_contexts(
        self, session_id: str, pipeline_name: str, heads: Mapping[str, tuple[str, str, str]]
    ) -> list[WorkspaceContext]:
        """The contexts of a recorded session, rebuilt from a checkpoint's snapshot (for `reopen_session`).

        Args:
            session_id: The recorded session.
            pipeline_name: Its pipeline.
            heads: Repo name -> (session branch, head SHA, base SHA) as the checkpoint recorded them.

        Raises:
            WorkspaceConfigError: A recorded repo is no longer configured or no longer a usable repository.
        """
        checker = RepoChecker(self._git, self._config_dir, self.state_dir)
        contexts = []
        for name, (branch, head, base) in heads.items():
            settings = self._settings.repos.get(name)
            if settings is None:
                raise WorkspaceConfigError(
                    [(f"workspace.repos.{name}", "the session uses this repo but it is no longer configured")]
                )
            root = checker.repo_root(f"workspace.repos.{name}", settings)
            in_place = settings.isolation == IN_PLACE
            contexts.append(
                WorkspaceContext(
                    repo_name=name,
                    repo_root=root,
                    worktree_path=root if in_place else self.worktrees_dir(session_id) / name,
                    branch_name=branch,
                    base_ref=settings.base_ref,
                    base_sha=base or head,
                    head_sha=head,
                    session_id=session_id,
                    pipeline_name=pipeline_name,
                    isolation=settings.isolation,
                    created_at=self._clock.now(),
                )
            )
        return contexts

    def _reattach(self, context: WorkspaceContext) -> None:
        root, path = context.repo_root, context.worktree_path
        if context.isolation == IN_PLACE:
            if self._git.current_branch(root) != context.branch_name:
                self._git.checkout(root, context.branch_name)
            return
        self._git.worktree_prune(root)
        for worktree in self._git.worktrees(root):
            if worktree.path.resolve() == path.resolve():
                if worktree.branch != context.branch_name:
                    raise WorkspaceError(
                        f"{context.repo_name}: {path} has {worktree.branch or 'a detached HEAD'} checked out, "
                        f"not {context.branch_name}"
                    )
                return
        if path.exists():
            raise WorkspaceError(f"{context.repo_name}: {path} exists but is not a worktree of {root}")
        path.parent.mkdir(parents=True, exist_ok=True)
        self._git.worktree_add(root, path, context.branch_name)
        copy_included_files(self._git, root, path, self._emit, session_id=context.session_id, repo=context.repo_name)
        head = self._git.resolve_commit(root, context.branch_ref) or ""
        self._emit(
            WorkspaceRestored(
                session_id=context.session_id, repo=context.repo_name, branch=context.branch_name, sha=head,
                reason="reopen",
            )
        )

    def _link_project(self, contexts: Sequence[WorkspaceContext]) -> None:
        """Record the project in every repo (see `projects`); a failure only costs `orchestra show` a hint."""
        for context in contexts:
            try:
                link_project(self._git, context.repo_root, self._project_root)
            except GitError as error:
                self._emit(ProjectLinkFailed(session_id=context.session_id, repo=context.repo_name, reason=str(error)))

    def _check_cheap_model(self, check: Callable[[], None]) -> None:
        try:
            check()
        except OrchestraError:
            raise
        except Exception as error:
            raise WorkspaceConfigError(
                [
                    (
                        "providers",
                        f"the `cheap` model alias (used for commit messages) cannot be resolved: {error}",
                    )
                ]
            ) from error

    def _session(self, session_id: str, contexts: list[WorkspaceContext]) -> WorkspaceSession:
        """The session over these contexts; a worktree that is lazy (made so by a run whose nodes all read through
        Orchestra's tools, and not made full since) is read from git's objects again."""
        lazy = {}
        for context in contexts:
            if context.isolation != IN_PLACE:
                files = self._git.tree_files(context.worktree_path)
                if files is not None:
                    lazy[context.repo_name] = files
        return WorkspaceSession(
            session_id,
            contexts,
            {context.repo_name: self._settings.repos[context.repo_name] for context in contexts},
            self._git,
            self._clock,
            self._commit_messages,
            self._emit,
            lazy,
        )
