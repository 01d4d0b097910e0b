"""The per-turn commit of one repo: exactly the turn's files, a cleaned message, agent metadata."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from attrs import frozen

from orchestra_core.agents.git_files import MAX_GITATTRIBUTES_BYTES, check_git_file, is_checked_file
from orchestra_core.agents.path_guard import PathGuard, ToolPathError
from orchestra_core.model.cancellation import takes_keyword
from orchestra_core.model.failover import ModelFailover
from orchestra_core.model.settings import RepoSettings
from orchestra_core.model.turn import AgentTurn, FileVersion, TurnCommit
from orchestra_core.model.workspace_events import (
    AgentCommitCreated,
    CommitMessageFallback,
    CommitModelFailedOver,
    UntrackedWritesCommitted,
    WorkspaceEvent,
    WritesNotCommitted,
)
from orchestra_core.ports.clock import Clock
from orchestra_core.ports.commit_messages import CommitMessageGenerator, CommitMessageRequest
from orchestra_core.ports.git import Git, GitError, Identity, RefConflictError, TreeChange
from orchestra_core.workspace.context import WorkspaceContext
from orchestra_core.workspace.errors import ProtectedBranchError, WorkspaceCommitError
from orchestra_core.workspace.messages import (
    agent_intent,
    clean_commit_message,
    fallback_message,
    truncate_diff,
    with_trailers,
)
from orchestra_core.workspace.naming import is_protected

AGENT_EMAIL = "orchestra@local"
COMMITTER_NAME = "Orchestra"
_REF_ATTEMPTS = 5
UNTRACKED_TRAILER = "Orchestra-Untracked"  # on commits of changes no tool reported (the safety net's)


@frozen
class _Message:
    text: str
    source: str  # "generator", "fallback" or "fixed" (given by whoever made the committer)


class RepoCommitter:
    """Commits turns into the session branches of one session.

    `message` (paths -> message) replaces the generator with a deterministic message (a tool stage's: no
    model call, no diff); `trailers` are added after Orchestra's own on every commit.
    """

    def __init__(
        self,
        git: Git,
        clock: Clock,
        generator: CommitMessageGenerator | None,
        emit: Callable[[WorkspaceEvent], None],
        *,
        message: Callable[[Sequence[str]], str] | None = None,
        trailers: Mapping[str, str] | None = None,
    ) -> None:
        self._git = git
        self._clock = clock
        self._generator = generator
        self._emit = emit
        self._fixed_message = message
        self._extra_trailers = dict(trailers or {})

    def commit(
        self,
        context: WorkspaceContext,
        settings: RepoSettings,
        turn: AgentTurn,
        paths: Sequence[str],
        on_head: Callable[[str], None] = lambda sha: None,
    ) -> TurnCommit | None:
        """Commit `paths` (the turn's writes in this repo); None when nothing changed.

        `on_head` gets the new head while the repo lock is still held, so heads are seen in order.

        Raises:
            ProtectedBranchError: The session branch matches `protected_branches`.
            WorkspaceCommitError: git refused (the files stay in the worktree).
        """
        if is_protected(context.branch_name, settings.protected_branches):
            raise ProtectedBranchError(
                f"{context.repo_name}: refusing to commit to protected branch {context.branch_name!r}"
            )
        try:
            return self._commit(context, settings, turn, self._committable(context, turn, paths), on_head)
        except GitError as error:
            raise WorkspaceCommitError(
                f"{context.repo_name}: could not commit turn {turn.turn_number} of {turn.node_id} "
                f"on {context.branch_name}: {error}"
            ) from error

    def _commit(
        self,
        context: WorkspaceContext,
        settings: RepoSettings,
        turn: AgentTurn,
        paths: list[str],
        on_head: Callable[[str], None],
    ) -> TurnCommit | None:
        if not paths:
            return None
        self._check_checkout(context)
        versions = {path: version for path, version in turn.versions_in(context.repo_name).items() if path in paths}
        change = self._git.tree_with_files(context.worktree_path, context.branch_ref, paths, versions)
        if not change.changed:
            return None
        message = self._message(context, turn, change, paths)
        full_message = with_trailers(message.text, self._trailers(context, turn))
        author, committer = self._identities(turn)
        with self._git.lock(context.worktree_path):
            if settings.run_hooks:
                sha = self._git.commit(
                    context.worktree_path,
                    full_message,
                    author=author,
                    committer=committer,
                    paths=paths,
                    run_hooks=True,
                    versions=versions,
                )
            else:
                sha = self._write_commit(context, change, paths, versions, full_message, author, committer)
                self._git.sync_index(context.worktree_path, paths, versions)
            on_head(sha)
        self._emit(
            AgentCommitCreated(
                session_id=context.session_id,
                repo=context.repo_name,
                branch=context.branch_name,
                sha=sha,
                node_id=turn.node_id,
                turn_number=turn.turn_number,
                files=paths,
                message=message.text,
                message_source=message.source,
            )
        )
        if turn.untracked:
            self._emit(
                UntrackedWritesCommitted(
                    session_id=context.session_id,
                    repo=context.repo_name,
                    node_id=turn.node_id,
                    turn_number=turn.turn_number,
                    paths=paths,
                    sha=sha,
                    branch=context.branch_name,
                )
            )
        return TurnCommit(repo=context.repo_name, sha=sha, message=message.text, branch=context.branch_name)

    def _committable(self, context: WorkspaceContext, turn: AgentTurn, paths: Sequence[str]) -> list[str]:
        """The paths to commit: valid, deduplicated, and not ignored by git (those are reported)."""
        valid, invalid, refused = split_committable(context, paths)
        self._report(context, turn, invalid, INVALID_REASON)
        self._report(context, turn, refused, REFUSED_REASON)
        ignored = set(self._git.ignored_paths(context.worktree_path, valid))
        self._report(
            context, turn, [p for p in valid if p in ignored], "ignored by git (.gitignore or info/exclude)"
        )
        return [path for path in valid if path not in ignored]

    def _report(self, context: WorkspaceContext, turn: AgentTurn, paths: list[str], reason: str) -> None:
        if paths:
            self._emit(
                WritesNotCommitted(
                    session_id=context.session_id,
                    repo=context.repo_name,
                    node_id=turn.node_id,
                    turn_number=turn.turn_number,
                    paths=paths,
                    reason=reason,
                )
            )

    def _check_checkout(self, context: WorkspaceContext) -> None:
        current = self._git.current_branch(context.worktree_path)
        if current != context.branch_name:
            raise WorkspaceCommitError(
                f"{context.repo_name}: {context.worktree_path} has {current or 'a detached HEAD'} checked out, "
                f"not the session branch {context.branch_name}; switch it back to commit there"
            )

    def _write_commit(
        self,
        context: WorkspaceContext,
        change: TreeChange,
        paths: list[str],
        versions: Mapping[str, FileVersion],
        message: str,
        author: Identity,
        committer: Identity,
    ) -> str:
        """commit-tree + update-ref with the expected old head; rebuilt on the new head if it moved."""
        worktree = context.worktree_path
        for _ in range(_REF_ATTEMPTS):
            sha = self._git.commit_tree(
                worktree,
                change.tree,
                parents=[change.base_commit],
                message=message,
                author=author,
                committer=committer,
            )
            try:
                self._git.update_ref(worktree, context.branch_ref, sha, expected_old=change.base_commit)
                return sha
            except RefConflictError:
                change = self._git.tree_with_files(worktree, context.branch_ref, paths, versions)
        raise WorkspaceCommitError(
            f"{context.repo_name}: {context.branch_name} kept moving; gave up committing"
        )

    def _message(
        self, context: WorkspaceContext, turn: AgentTurn, change: TreeChange, paths: list[str]
    ) -> _Message:
        if self._fixed_message is not None:
            return _Message(self._fixed_message(paths), "fixed")
        if self._generator is None:
            return _Message(fallback_message(paths), "fallback")
        diff, truncated = truncate_diff(self._git.diff(context.worktree_path, change.base_tree, change.tree))
        request = CommitMessageRequest(
            diff=diff,
            intent=agent_intent(turn.messages),
            files=tuple(paths),
            repo=context.repo_name,
            node_id=turn.node_id,
            diff_truncated=truncated,
        )
        try:
            cleaned = clean_commit_message(self._generate(context, request), paths)
            reason = "the generated message was empty or unusable"
        except Exception as error:
            cleaned, reason = None, f"{type(error).__name__}: {error}"
        if cleaned is not None:
            return _Message(cleaned, "generator")
        self._emit(
            CommitMessageFallback(
                session_id=context.session_id,
                repo=context.repo_name,
                node_id=turn.node_id,
                turn_number=turn.turn_number,
                reason=reason,
            )
        )
        return _Message(fallback_message(paths), "fallback")

    def _generate(self, context: WorkspaceContext, request: CommitMessageRequest) -> str:
        """The generator's message; a generator that fails over to another model says so (a warning event)."""
        assert self._generator is not None
        if not takes_keyword(self._generator.generate, "on_failover"):
            return self._generator.generate(request)

        def on_failover(failover: ModelFailover) -> None:
            self._emit(CommitModelFailedOver(session_id=context.session_id, repo=context.repo_name, failover=failover))

        return self._generator.generate(request, on_failover=on_failover)  # type: ignore[call-arg]

    def _trailers(self, context: WorkspaceContext, turn: AgentTurn) -> dict[str, str]:
        trailers = {
            "Orchestra-Model": turn.model,
            "Orchestra-Provider": turn.provider,
            "Orchestra-Node": turn.node_id,
            "Orchestra-Pipeline": context.pipeline_name,
            "Orchestra-Session": context.session_id,
            "Orchestra-Turn": str(turn.turn_number),
        }
        if turn.untracked:
            trailers[UNTRACKED_TRAILER] = "true"
        return trailers | self._extra_trailers

    def _identities(self, turn: AgentTurn) -> tuple[Identity, Identity]:
        now = self._clock.now()
        author = Identity(f"{turn.node_id} ({turn.model or 'unknown'})", AGENT_EMAIL, now)
        return author, Identity(COMMITTER_NAME, AGENT_EMAIL, now)


def split_committable(context: WorkspaceContext, paths: Sequence[str]) -> tuple[list[str], list[str], list[str]]:
    """`paths` as (valid repo-relative paths, deduplicated; paths that are not clean paths inside the repo
    (a spelling of `.git`, `.orchestra`, a line break...); `.gitmodules` or `.gitattributes` whose content
    git's fsck refuses). Every commit path takes only the first: the tools refuse such writes, but a command
    or a CLI agent's own tool may have made them."""
    checker = PathGuard(context.worktree_path, context.repo_name)
    valid: list[str] = []
    invalid: list[str] = []
    refused: list[str] = []
    for path in paths:
        try:
            relative = checker.relative(path).as_posix()
        except ToolPathError:
            invalid.append(path)
            continue
        if relative != "." and relative not in valid and relative not in refused:
            (valid if _content_acceptable(checker, relative) else refused).append(relative)
    return valid, invalid, refused


INVALID_REASON = "not a path inside the repo"
REFUSED_REASON = "content git's fsck refuses (.gitmodules or .gitattributes)"


def _content_acceptable(checker: PathGuard, path: str) -> bool:
    """Whether a `.gitmodules` or `.gitattributes` (in any spelling) holds content git's fsck accepts."""
    name = path.rsplit("/", 1)[-1]
    if not is_checked_file(name):
        return True
    try:
        _guarded, fd = checker.open_read(path)
    except (OSError, ToolPathError):
        return True  # gone (a deletion to commit) or not a file: the tree builder decides
    try:
        with open(fd, "rb", closefd=True) as handle:
            check_git_file(path, name, handle.read(MAX_GITATTRIBUTES_BYTES + 1))
    except ToolPathError:
        return False
    return True
