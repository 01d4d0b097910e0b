"""Session setup: check every workspace repo first, then create branches and worktrees (undone on failure)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import suppress
from pathlib import Path
from typing import NoReturn

from attrs import frozen

from orchestra_core.model.settings import ISOLATION_MODES, RepoSettings
from orchestra_core.model.workspace_events import SessionBranchCreated, WorkspaceEvent, WorktreeCreated
from orchestra_core.ports.clock import Clock
from orchestra_core.ports.git import Git, GitError, RefConflictError
from orchestra_core.workspace.context import IN_PLACE, WorkspaceContext
from orchestra_core.workspace.errors import WorkspaceConfigError, WorkspaceError
from orchestra_core.workspace.naming import free_branch_name, is_protected, session_branch_name
from orchestra_core.workspace.worktree_include import copy_included_files

_CREATE_ATTEMPTS = 3


@frozen
class RepoPlan:
    """A checked repo, ready for its session branch."""

    name: str
    settings: RepoSettings
    repo_root: Path
    base_sha: str
    worktree_path: Path
    wanted_branch: str


class RepoChecker:
    """Finds every problem with the configured repos without changing anything."""

    def __init__(self, git: Git, config_dir: Path, state_dir: Path) -> None:
        self._git = git
        self._config_dir = config_dir
        self._state_dir = state_dir

    def plans(
        self, repos: Mapping[str, RepoSettings], worktrees_dir: Path, pipeline_name: str, session_id: str
    ) -> list[RepoPlan]:
        """One plan per repo, in configuration order.

        Raises:
            WorkspaceConfigError: Every problem found, each under its orchestra.yaml key.
        """
        problems: list[tuple[str, str]] = []
        plans: list[RepoPlan] = []
        roots: dict[Path, str] = {}
        for name, settings in repos.items():
            key = f"workspace.repos.{name}"
            try:
                plan = self._plan(name, settings, worktrees_dir, pipeline_name, session_id)
            except WorkspaceConfigError as error:
                problems.extend(error.problems)
                continue
            if plan.repo_root in roots:
                problems.append(
                    (f"{key}.path", f"same repository as workspace.repos.{roots[plan.repo_root]}")
                )
                continue
            roots[plan.repo_root] = name
            plans.append(plan)
        if problems:
            raise WorkspaceConfigError(problems)
        return plans

    def _plan(
        self, name: str, settings: RepoSettings, worktrees_dir: Path, pipeline_name: str, session_id: str
    ) -> RepoPlan:
        key = check_repo_entry(name, settings)
        root = self.repo_root(key, settings)
        base_sha = self._base_sha(key, root, settings.base_ref)
        wanted = self.session_branch(key, settings, root, pipeline_name, session_id)
        worktree = root if settings.isolation == IN_PLACE else worktrees_dir / name
        if settings.isolation == IN_PLACE:
            self._require_clean(key, root)
        elif worktree.exists():
            _fail(key, f"the session worktree {worktree} already exists")
        return RepoPlan(name, settings, root, base_sha, worktree, wanted)

    def session_branch(
        self, key: str, settings: RepoSettings, cwd: Path, pipeline_name: str, session_id: str
    ) -> str:
        """The session branch a run of the repo gets, checked to be a valid branch name and not protected.

        Args:
            cwd: Where git may run to check the name (the repository, or any directory before it is cloned).

        Raises:
            WorkspaceConfigError: The name is not valid, or matches a protected pattern (under `branch_prefix`).
        """
        wanted = session_branch_name(settings.branch_prefix, pipeline_name, session_id)
        if not self._git.is_valid_branch_name(cwd, wanted):
            _fail(
                f"{key}.branch_prefix",
                f"{settings.branch_prefix!r} does not make a valid branch name ({wanted!r})",
            )
        protected = [p for p in settings.protected_branches if is_protected(wanted, [p])]
        if protected:
            _fail(
                f"{key}.branch_prefix",
                f"session branch {wanted!r} would match protected pattern {protected[0]!r}",
            )
        return wanted

    def repo_root(self, key: str, settings: RepoSettings) -> Path:
        """The repo's top-level directory, checked to be a non-bare git repository."""
        path = configured_path(settings, self._config_dir)
        if not path.is_dir():
            _fail(f"{key}.path", f"{path} does not exist or is not a directory")
        try:
            info = self._git.repository(path)
        except GitError:
            _fail(f"{key}.path", f"{path} is not a git repository")
        if info.is_bare or info.toplevel is None:
            _fail(f"{key}.path", f"{path} is a bare repository; Orchestra needs one with a working tree")
        if info.toplevel.resolve() != path:
            _fail(f"{key}.path", f"{path} is inside the repository at {info.toplevel}; give its top level")
        return path

    def _base_sha(self, key: str, root: Path, base_ref: str) -> str:
        sha = self._git.resolve_commit(root, base_ref)
        if sha is not None:
            return sha
        if base_ref == "HEAD":
            _fail(
                f"{key}.base_ref",
                f"HEAD of {root} names no commit (an empty repository?); commit something first",
            )
        _fail(f"{key}.base_ref", f"{base_ref!r} does not name a commit in {root}")

    def _require_clean(self, key: str, root: Path) -> None:
        state = self._state_dir.resolve()
        dirty = [
            entry.path
            for entry in self._git.status(root)
            if not (root / entry.path).resolve().is_relative_to(state)
        ]
        if dirty:
            shown = ", ".join(dirty[:5]) + (f" and {len(dirty) - 5} more" if len(dirty) > 5 else "")
            _fail(
                f"{key}.isolation",
                f"in_place needs a clean working tree, but {root} has changes ({shown}); "
                "commit or stash them, or use isolation: worktree",
            )


def check_repo_entry(name: str, settings: RepoSettings) -> str:
    """The repo's orchestra.yaml key (`workspace.repos.<name>`), once its name and isolation are checked.

    Raises:
        WorkspaceConfigError: The name is not a plain word, or the isolation is unknown.
    """
    key = f"workspace.repos.{name}"
    if not name or "/" in name or name in (".", "..") or name.startswith("."):
        _fail(key, "a repo name must be a plain word (it names tools and a directory)")
    if settings.isolation not in ISOLATION_MODES:
        _fail(f"{key}.isolation", f"{settings.isolation!r} is not one of {', '.join(ISOLATION_MODES)}")
    return key


def configured_path(settings: RepoSettings, config_dir: Path) -> Path:
    """The real path of a repo's `path` setting (`~` expanded, relative to the orchestra.yaml directory)."""
    path = Path(settings.path).expanduser()
    return (path if path.is_absolute() else config_dir / path).resolve()


def _fail(key: str, detail: str) -> NoReturn:
    raise WorkspaceConfigError([(key, detail)])


class BranchCreator:
    """Creates session branches and worktrees from plans; undoes its own work when a step fails."""

    def __init__(
        self, git: Git, clock: Clock, emit: Callable[[WorkspaceEvent], None], *, lazy: bool = False
    ) -> None:
        self._git = git
        self._clock = clock
        self._emit = emit
        self._lazy = lazy  # worktrees made lazy (`Git.worktree_add_lazy`), not full checkouts

    def create_all(
        self, plans: list[RepoPlan], session_id: str, pipeline_name: str
    ) -> list[WorkspaceContext]:
        """Contexts for every plan, in order.

        Raises:
            WorkspaceError: A step failed; everything created so far was removed again.
        """
        undo: list[Callable[[], None]] = []
        contexts = []
        try:
            for plan in plans:
                contexts.append(self._create(plan, session_id, pipeline_name, undo))
        except (GitError, WorkspaceError) as error:
            for step in reversed(undo):
                with suppress(GitError):  # best effort: the original error is the one to report
                    step()
            raise WorkspaceError(f"setting up the session workspace failed: {error}") from error
        for context in contexts:
            self._emit_created(context, plans)
        return contexts

    def _create(
        self, plan: RepoPlan, session_id: str, pipeline_name: str, undo: list[Callable[[], None]]
    ) -> WorkspaceContext:
        root = plan.repo_root
        branch = self._create_branch(plan)
        undo.append(lambda: self._git.delete_branch(root, branch))
        previous = ""
        if plan.settings.isolation == IN_PLACE:
            previous = self._git.current_branch(root) or self._git.resolve_commit(root, "HEAD") or branch
            self._git.checkout(root, branch)
            undo.append(lambda: self._git.checkout(root, previous))
        else:
            plan.worktree_path.parent.mkdir(parents=True, exist_ok=True)
            self._add_worktree(root, plan.worktree_path, branch)
            undo.append(lambda: self._git.worktree_remove(root, plan.worktree_path))
            copy_included_files(self._git, root, plan.worktree_path, self._emit, session_id=session_id, repo=plan.name)
        return WorkspaceContext(
            repo_name=plan.name,
            repo_root=root,
            worktree_path=plan.worktree_path,
            branch_name=branch,
            base_ref=plan.settings.base_ref,
            base_sha=plan.base_sha,
            head_sha=plan.base_sha,
            session_id=session_id,
            pipeline_name=pipeline_name,
            isolation=plan.settings.isolation,
            created_at=self._clock.now(),
            original_checkout=previous,
        )

    def _add_worktree(self, root: Path, path: Path, branch: str) -> None:
        add = self._git.worktree_add_lazy if self._lazy else self._git.worktree_add
        try:
            add(root, path, branch)
        except GitError:
            # A worktree whose directory is gone (`.orchestra` deleted by hand) is still registered and refuses
            # the path: forget such records and try once more (not before: `prune` is a process and a lock).
            self._git.worktree_prune(root)
            add(root, path, branch)

    def _create_branch(self, plan: RepoPlan) -> str:
        for _ in range(_CREATE_ATTEMPTS):
            branch = free_branch_name(plan.wanted_branch, self._git.branches(plan.repo_root))
            try:
                self._git.create_branch(plan.repo_root, branch, plan.base_sha)
                return branch
            except RefConflictError:
                continue  # someone took the name between listing and creating
        raise WorkspaceError(f"{plan.name}: could not create a session branch near {plan.wanted_branch!r}")

    def _emit_created(self, context: WorkspaceContext, plans: list[RepoPlan]) -> None:
        wanted = next(plan.wanted_branch for plan in plans if plan.name == context.repo_name)
        self._emit(
            SessionBranchCreated(
                session_id=context.session_id,
                repo=context.repo_name,
                branch=context.branch_name,
                base_ref=context.base_ref,
                base_sha=context.base_sha,
                worktree_path=str(context.worktree_path),
                isolation=context.isolation,
                requested_branch=wanted,
            )
        )
        if context.isolation == "worktree":
            self._emit(
                WorktreeCreated(
                    session_id=context.session_id,
                    repo=context.repo_name,
                    path=str(context.worktree_path),
                    branch=context.branch_name,
                    base_sha=context.base_sha,
                )
            )
