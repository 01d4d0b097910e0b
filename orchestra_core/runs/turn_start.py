"""Starting a run at an agent turn: `resume SESSION --turn T` and `replay SESSION --turn T`.

The pipeline state is the enclosing checkpoint's (the latest one before the turn: its next node is the
turn's node), every repo's code is where the turn left it (its commit, else the repo's latest commit
before it), and the node's backend is told to continue the agent's conversation after the turn
(model/agent_resume.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from attrs import evolve, frozen

from orchestra_core.model.agent_resume import AgentResume
from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.store_errors import TurnNotFoundError
from orchestra_core.model.turn import AgentTurn
from orchestra_core.ports.session_store import SessionStore, StoredTurn
from orchestra_core.runs.start import REPLAY, RESUME, SessionStart, _from_checkpoint, _main_session
from orchestra_core.session.api import CheckpointAt, history, latest_checkpoint
from orchestra_core.session.catalog import AGENT_TURN
from orchestra_core.session.checkpoints import RepoHead
from orchestra_core.session.codec import decode_record
from orchestra_core.session.turn_view import decode_fields

_LIGHT = ("messages",)  # what the walk back over earlier turns does not need


class TurnChoiceError(OrchestraError):
    """The turn given to `--turn` is not an agent turn of the session's own history (bad input)."""


@frozen
class TurnPoint:
    """An agent turn to continue after, with the checkpoint enclosing it.

    Attributes:
        turn: The stored AgentTurn.
        record: Its record.
        enclosing: The latest checkpoint before it (its next node is the turn's node).
    """

    turn: StoredTurn
    record: AgentTurn
    enclosing: CheckpointAt

    @property
    def resume(self) -> AgentResume:
        return AgentResume(self.record.node_id, self.record.turn_number, self.record.agent_state_ref)


def start_resume_at_turn(store: SessionStore, session_id: str, turn_id: str, pipeline: Path | None) -> SessionStart:
    """Continue a session after one of its agent turns, in the same session and on the same branches.

    Raises:
        SessionNotFoundError: No such session.
        TurnChoiceError: The turn is not an agent turn of the session, or cannot be continued.
    """
    info = store.get_session(session_id)
    main = _main_session(store, info)
    if main != info.session_id:
        raise TurnChoiceError(
            f"session {info.session_id} is a parallel branch of session {main}; turns inside parallel branches "
            "cannot be resumed (resume or replay the run from a checkpoint)"
        )
    point = agent_turn_point(store, info.session_id, turn_id)
    start = _from_checkpoint(store, RESUME, info.session_id, point.enclosing, pipeline)
    return _at_turn(store, info.session_id, start, point)


def start_replay_at_turn(store: SessionStore, session_id: str, turn_id: str, pipeline: Path | None) -> SessionStart:
    """Plan a replay after one of a session's agent turns: `begin` forks the session at that turn (O(1)), the
    new session branches start at the turn's commits, and the node's agent continues after the turn.

    Raises:
        SessionNotFoundError: No such session.
        TurnChoiceError: The turn is not an agent turn of the session, or cannot be continued.
    """
    source = store.get_session(session_id)
    main = _main_session(store, source)
    if main != source.session_id:
        raise TurnChoiceError(
            f"session {source.session_id} is a parallel branch of session {main}; turns inside parallel "
            f"branches cannot be replayed from (replay session {main} with --checkpoint)"
        )
    point = agent_turn_point(store, source.session_id, turn_id)
    start = _from_checkpoint(store, REPLAY, "", point.enclosing, pipeline)
    start = _at_turn(store, source.session_id, start, point)
    return evolve(start, origin=(source.session_id, point.turn.turn_id), fork_at=point.turn.turn_id)


def agent_turn_point(store: SessionStore, session_id: str, turn_id: str) -> TurnPoint:
    """The agent turn `turn_id` of the session's history and the checkpoint enclosing it.

    Raises:
        TurnChoiceError: No such turn in the session's history, not an AgentTurn, or no checkpoint leads to
            its node (a turn of a parallel branch or child run).
    """
    hint = f"see `orchestra status {session_id}` for its agent turns"
    try:
        turn = store.get_turn(session_id, turn_id)
    except TurnNotFoundError:
        raise TurnChoiceError(f"turn {turn_id!r} is not in the history of session {session_id}; {hint}") from None
    if turn.type_id != AGENT_TURN.type_id:
        raise TurnChoiceError(
            f"turn {turn_id!r} of session {session_id} is a {turn.type_id} turn, not an agent turn; {hint}"
        )
    record = decode_record(turn)
    assert isinstance(record, AgentTurn)
    enclosing = latest_checkpoint(store, session_id, at_turn_id=turn.turn_id)
    if enclosing is None or enclosing.checkpoint.next_node != record.node_id:
        raise TurnChoiceError(
            f"turn {turn_id!r} of session {session_id} (node {record.node_id}) has no checkpoint before it "
            "that leads to its node; it cannot be continued"
        )
    return TurnPoint(turn, record, enclosing)


def _at_turn(store: SessionStore, session_id: str, start: SessionStart, point: TurnPoint) -> SessionStart:
    """The start moved from its checkpoint to the turn: each repo at its commit there, the agent told to go on."""
    assert start.checkpoint is not None
    shas = shas_at_turn(store, session_id, point, start.repo_heads)
    heads = {name: evolve(head, sha=shas.get(name, head.sha)) for name, head in start.repo_heads.items()}
    # A tool stage's turn has no agent to continue: its node runs again, on the code the turn left.
    resume = {} if point.record.by_tool_stage else point.resume.context_values()
    context = {**start.checkpoint.context, **resume}
    return evolve(start, checkpoint=evolve(start.checkpoint, context=context), repo_heads=heads)


def shas_at_turn(
    store: SessionStore, session_id: str, point: TurnPoint, repos: Mapping[str, RepoHead]
) -> dict[str, str]:
    """Each repo's latest commit at the turn, for the repos committed to between the enclosing checkpoint and
    the turn (the turn's own commits first; for a read-only turn, the latest earlier ones). Walks back from the
    turn only until every repo has one or the checkpoint is reached."""
    shas = {commit.repo: commit.sha for commit in point.record.commits}  # the last commit of a repo wins
    stop = point.enclosing.turn.turn_id
    wanted = set(repos)
    if wanted <= shas.keys():
        return shas
    for stored in history(store, session_id, page_size=64, start_before=point.turn.turn_id):
        if stored.turn_id == stop:
            break
        if stored.type_id != AGENT_TURN.type_id:
            continue
        record = decode_fields(stored, _LIGHT)
        assert isinstance(record, AgentTurn)
        for commit in reversed(record.commits):
            shas.setdefault(commit.repo, commit.sha)
        if wanted <= shas.keys():
            break
    return shas
