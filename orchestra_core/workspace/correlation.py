"""From a commit to the agent turn that made it: the Orchestra trailers, then the session's recorded history."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from attrs import frozen

from orchestra_core.model.records import ParallelExecution
from orchestra_core.model.turn import AgentTurn
from orchestra_core.ports.session_store import SessionStore, StoredTurn
from orchestra_core.session.api import history
from orchestra_core.session.catalog import AGENT_TURN, PARALLEL_EXECUTION
from orchestra_core.session.codec import decode_record

PARALLEL_SPAWN_REASON = "parallel"
_SESSION_LISTING_LIMIT = 10_000


@frozen
class OrchestraTrailers:
    """The Orchestra trailers of a commit (see workspace/committer.py); only the session is required.

    `untracked` is True for a commit of changes no tool reported (`Orchestra-Untracked: true`).
    """

    session_id: str
    node_id: str | None = None
    turn_number: int | None = None
    pipeline: str | None = None
    model: str | None = None
    provider: str | None = None
    untracked: bool = False

    @classmethod
    def parse(cls, trailers: Mapping[str, str]) -> OrchestraTrailers | None:
        """Read `Orchestra-*` trailers (keys compared case-insensitively, as git does); None without a session."""
        values = {key.lower(): value.strip() for key, value in trailers.items()}
        session = values.get("orchestra-session", "")
        if not session:
            return None
        turn = values.get("orchestra-turn", "")
        return cls(
            session_id=session,
            node_id=values.get("orchestra-node") or None,
            turn_number=int(turn) if turn.isdigit() else None,
            pipeline=values.get("orchestra-pipeline") or None,
            model=values.get("orchestra-model") or None,
            provider=values.get("orchestra-provider") or None,
            untracked=values.get("orchestra-untracked", "").lower() == "true",
        )

    def to_json(self) -> dict[str, object]:
        return {
            "session": self.session_id,
            "node": self.node_id,
            "turn": self.turn_number,
            "pipeline": self.pipeline,
            "model": self.model,
            "provider": self.provider,
            "untracked": self.untracked,
        }


@frozen
class CommitTurn:
    """The recorded agent turn behind a commit.

    Attributes:
        session_id: The session whose history holds the turn: the trailers' session, or the forked
            session of the parallel branch the agent ran in.
        turn: The stored AgentTurn turn (its `turn_id` is what `resume --turn` takes).
        record: The decoded AgentTurn.
        exact: True when the turn recorded this very SHA; False when the commit is a copy of a recorded
            one (rebased, amended or cherry-picked) found by its node, turn number and subject.
    """

    session_id: str
    turn: StoredTurn
    record: AgentTurn
    exact: bool = True


def find_commit_turn(
    store: SessionStore, trailers: OrchestraTrailers, sha: str, subject: str = ""
) -> CommitTurn | None:
    """Search the trailers' session, and the sessions of its parallel branches, for the turn behind `sha`.

    A turn whose commits include `sha` wins. Otherwise the newest turn of the trailers' node and turn
    number whose commit had the same subject is returned with `exact=False`; None when neither exists.

    Raises:
        SessionNotFoundError: The trailers' session is not in this store.
        TurnDataError: A turn in the history cannot be decoded.
    """
    store.get_session(trailers.session_id)
    fallback: CommitTurn | None = None
    for session_id, turn, record in _agent_turns(store, trailers.session_id):
        if sha in _shas(record):
            return CommitTurn(session_id, turn, record, exact=True)
        if fallback is None and _same_change(record, trailers, subject):
            fallback = CommitTurn(session_id, turn, record, exact=False)
    return fallback


def _agent_turns(store: SessionStore, root: str) -> Iterator[tuple[str, StoredTurn, AgentTurn]]:
    """Every AgentTurn of `root` and of its branch sessions (each shared turn once), newest first per session."""
    seen: set[str] = set()
    walked: list[str] = []
    pending = [root]
    listing: list[tuple[str, str | None]] | None = None
    while pending:
        session_id = pending.pop(0)
        walked.append(session_id)
        for turn in history(store, session_id):
            if turn.turn_id in seen:
                break  # the rest is history shared with a session already walked
            seen.add(turn.turn_id)
            if turn.type_id == PARALLEL_EXECUTION.type_id:
                pending += [s for s in _branch_ids(turn) if s not in walked and s not in pending]
            elif turn.type_id == AGENT_TURN.type_id:
                record = decode_record(turn)
                if isinstance(record, AgentTurn):
                    yield session_id, turn, record
        if not pending:
            # Branches of a run that died before fan-in are named by no record of the parent: list them.
            listing = listing if listing is not None else _parallel_forks(store)
            pending = [child for child, parent in listing if parent in walked and child not in walked]


def _branch_ids(turn: StoredTurn) -> list[str]:
    record = decode_record(turn)
    if not isinstance(record, ParallelExecution):
        return []
    ids = [record.branch_session_id, *record.branch_session_ids]
    return [str(session_id) for session_id in ids if session_id]


def _parallel_forks(store: SessionStore) -> list[tuple[str, str | None]]:
    return [
        (info.session_id, info.metadata.parent_session_id)
        for info in store.list_sessions(limit=_SESSION_LISTING_LIMIT)
        if info.metadata.spawn_reason == PARALLEL_SPAWN_REASON
    ]


def _shas(record: AgentTurn) -> set[str]:
    shas = {commit.sha for commit in record.commits}
    if record.git_sha:
        shas.add(record.git_sha)
    return shas


def _same_change(record: AgentTurn, trailers: OrchestraTrailers, subject: str) -> bool:
    if not subject or record.node_id != trailers.node_id or record.turn_number != trailers.turn_number:
        return False
    messages = [commit.message for commit in record.commits] or [record.commit_message or ""]
    return any(message.split("\n", 1)[0].strip() == subject.strip() for message in messages)
