"""From a recorded agent turn to the code as it was then, checked out in detached worktrees of its own.

The turn may be one of the session's own or one of its parallel branches' (their turns live in forked
sessions). Each repo's code at the turn is the turn's own commit, else the repo's latest commit before the
turn since the enclosing checkpoint, else the head that checkpoint recorded. `orchestra checkout` puts
each at `.orchestra/checkouts/<session>/turn-<turn>/<repo>` with a detached HEAD: a view of the past,
outside the user's checkout, that moves no branch.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

from attrs import frozen

from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.store_errors import TurnNotFoundError
from orchestra_core.model.turn import AgentTurn
from orchestra_core.ports.git import Git, GitError
from orchestra_core.ports.session_store import SessionStore, StoredTurn
from orchestra_core.runs.turn_start import TurnPoint, shas_at_turn
from orchestra_core.session.api import latest_checkpoint
from orchestra_core.session.catalog import AGENT_TURN
from orchestra_core.session.checkpoints import repo_heads
from orchestra_core.session.codec import decode_record
from orchestra_core.session.trace import SessionTrace
from orchestra_core.workspace.checkouts import checkouts_dir

# Where a repo's code at the turn came from.
TURN, EARLIER, CHECKPOINT = "turn", "earlier", "checkpoint"


class TurnCheckoutError(OrchestraError):
    """The turn cannot be checked out: not an agent turn of the session, or its code is unknown (bad input)."""


@frozen
class FoundTurn:
    """An agent turn, the session whose history holds it (a parallel branch's own session, or the one asked
    for) and the session asked for."""

    session_id: str
    turn: StoredTurn
    record: AgentTurn
    asked_session_id: str

    @property
    def in_branch(self) -> bool:
        """Whether the turn is a parallel branch's (recorded in a forked session)."""
        return self.session_id != self.asked_session_id


@frozen
class RepoAtTurn:
    """A repo's code at a turn: the commit and where it came from (`turn`, `earlier` or `checkpoint`)."""

    repo: str
    sha: str
    source: str


def checkout_dir(project_root: Path, found: FoundTurn) -> Path:
    """`.orchestra/checkouts/<session>/turn-<turn id>`, holding one worktree per repo."""
    return checkouts_dir(project_root) / found.asked_session_id / f"turn-{found.turn.turn_id}"


def find_agent_turn(store: SessionStore, session_id: str, turn_id: str) -> FoundTurn:
    """The agent turn `turn_id` of the session or of one of its parallel branches.

    Raises:
        SessionNotFoundError: No such session.
        TurnCheckoutError: No such turn in the session or its branches, or not an agent turn.
    """
    info = store.get_session(session_id)
    hint = f"see `orchestra status {info.session_id}` for its agent turns"
    for candidate in _run_sessions(store, info.session_id):
        try:
            turn = store.get_turn(candidate, turn_id)
        except (TurnNotFoundError, ValueError):
            continue
        if turn.type_id != AGENT_TURN.type_id:
            raise TurnCheckoutError(
                f"turn {turn_id!r} of session {info.session_id} is a {turn.type_id} turn, not an agent turn; {hint}"
            )
        record = decode_record(turn)
        assert isinstance(record, AgentTurn)
        return FoundTurn(candidate, turn, record, info.session_id)
    raise TurnCheckoutError(f"turn {turn_id!r} is not an agent turn of session {info.session_id}; {hint}")


def _run_sessions(store: SessionStore, session_id: str) -> Iterator[str]:
    """The session, then (read only when needed) the sessions of its parallel branches and child runs."""
    yield session_id
    trace = SessionTrace(store, session_id, brief=True)
    trace.read()
    yield from (line.session_id for line in trace.lines if line.session_id != session_id)


def recorded_sha(store: SessionStore, session_id: str, turn_id: str, repo: str) -> str | None:
    """The commit `orchestra checkout SESSION --turn TURN` puts `repo` at; None when the store cannot say."""
    try:
        return code_at_turn(store, find_agent_turn(store, session_id, turn_id))[repo].sha
    except (OrchestraError, KeyError):
        return None


def code_at_turn(store: SessionStore, found: FoundTurn) -> dict[str, RepoAtTurn]:
    """Every workspace repo's commit at the turn.

    Raises:
        TurnCheckoutError: No checkpoint precedes the turn, so the repos' code is not known.
    """
    enclosing = latest_checkpoint(store, found.session_id, at_turn_id=found.turn.turn_id)
    if enclosing is None:
        raise TurnCheckoutError(
            f"turn {found.turn.turn_id} of session {found.asked_session_id} has no checkpoint before it: "
            "the code it saw is not recorded"
        )
    heads = repo_heads(enclosing.checkpoint)
    point = TurnPoint(found.turn, found.record, enclosing)
    shas = shas_at_turn(store, found.session_id, point, heads)
    own = {commit.repo: commit.sha for commit in found.record.commits}
    code = {name: RepoAtTurn(name, head.sha, CHECKPOINT) for name, head in heads.items()}
    for name, sha in shas.items():
        code[name] = RepoAtTurn(name, sha, TURN if own.get(name) == sha else EARLIER)
    return dict(sorted(code.items()))


def check_out(
    git: Git, roots: Mapping[str, Path], target: Path, code: Mapping[str, RepoAtTurn]
) -> dict[str, Path]:
    """A detached worktree per repo at `target/<repo>` on the repo's commit; one already there is reused.

    Raises:
        TurnCheckoutError: A repo is not configured here, its commit is not in it, or `target/<repo>`
            holds something else.
    """
    paths: dict[str, Path] = {}
    for name, at in code.items():
        root = roots.get(name)
        if root is None:
            raise TurnCheckoutError(
                f"repo {name!r} of the turn is not a workspace repo here (workspace.repos.{name} in orchestra.yaml)"
            )
        path = target / name
        if _already_there(git, root, path, at.sha):
            paths[name] = path
            continue
        if git.resolve_commit(root, at.sha) is None:
            raise TurnCheckoutError(f"{name}: commit {at.sha[:12]} is not in {root} (was the repository replaced?)")
        if path.exists():
            raise TurnCheckoutError(f"{path} already exists and is not a checkout of {at.sha[:12]}; remove it first")
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            git.worktree_add_detached(root, path, at.sha)
        except GitError as error:
            raise TurnCheckoutError(f"{name}: git could not check out {at.sha[:12]} at {path}: {error}") from None
        paths[name] = path
    return paths


def _already_there(git: Git, root: Path, path: Path, sha: str) -> bool:
    wanted = _real(path)
    return any(
        _real(worktree.path) == wanted and worktree.head == sha and worktree.detached and not worktree.prunable
        for worktree in git.worktrees(root)
    )


def _real(path: Path) -> Path:
    try:
        return path.resolve()
    except OSError:
        return path
