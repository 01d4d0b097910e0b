"""How a run begins: a new session, the resume of a recorded one, or a replay forked from one of its turns."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from attrs import evolve, field, frozen

from orchestra_core.model.checkpoint import Checkpoint
from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.graph import Graph
from orchestra_core.model.store_errors import SessionNotFoundError
from orchestra_core.ports.session_store import SessionInfo, SessionMetadata, SessionStore
from orchestra_core.session.api import fork_session, latest_checkpoint
from orchestra_core.session.checkpoints import PipelineSource, RepoHead, from_record, repo_heads
from orchestra_core.session.restart import recorded_branches, recorded_start, resume_advice
from orchestra_core.session.trace import PARALLEL_SPAWN

NEW, RESUME, REPLAY = "new", "resume", "replay"


class NothingToResumeError(OrchestraError):
    """The session has no checkpoint to continue from."""


@frozen
class SessionStart:
    """Where a run starts.

    Attributes:
        kind: `new`, `resume` (same session, same branches) or `replay` (a forked session, new branches).
        session_id: The session the run records into.
        pipeline_text: The DOT source to run (for resume and replay: as it was recorded).
        source: Where the pipeline came from (file and blob), recorded with every checkpoint.
        checkpoint: The point to continue from (None for a new run).
        repo_heads: Each workspace repo's branch and head at that point.
        origin: For a replay, the session it forks and the checkpoint turn it continues from.
        fork_at: For a replay not begun yet, the turn to fork at (`begin` forks; `session_id` is "" until then).
        new_session: For a new run not begun yet, the session to create (`begin` creates it; `session_id` is
            "" until then), so that a run refused before it begins records nothing.
        from_start: A resume of a session that stopped before its first checkpoint: it runs from the start node
            again, in the same session, on the session branches it recorded (`repo_heads`, at their recorded
            base) or on new ones when it recorded none.
        initial_context: The values the session was started with (`--set`), for a run from the start; the run's
            own values override them.
    """

    kind: str
    session_id: str
    pipeline_text: str
    source: PipelineSource
    checkpoint: Checkpoint | None = None
    repo_heads: Mapping[str, RepoHead] = field(factory=dict)
    origin: tuple[str, str] | None = None
    fork_at: str | None = None
    new_session: SessionMetadata | None = None
    from_start: bool = False
    initial_context: Mapping[str, Any] = field(factory=dict)

    @property
    def creates_session(self) -> bool:
        """Whether `begin` makes a new session (a new run, or a replay's fork)."""
        return self.new_session is not None or self.fork_at is not None


def start_new(store: SessionStore, graph: Graph, pipeline_path: Path, text: str) -> SessionStart:
    """Plan the session of a new run; the DOT source is kept as a blob so resume and replay can reload it.

    The session itself is created by `begin`, once the run's checks have passed: a run that cannot start
    leaves no session behind.
    """
    blob = store.put_blob(text.encode("utf-8"))
    source = PipelineSource(str(pipeline_path), blob)
    return SessionStart(NEW, "", text, source, new_session=session_metadata(graph, pipeline_path))


def start_resume(store: SessionStore, session_id: str, pipeline: Path | None) -> SessionStart:
    """Continue a session from its latest checkpoint; one that stopped before its first checkpoint starts again
    from the beginning, in the same session (`from_start`), with the pipeline and values its start recorded.

    Raises:
        SessionNotFoundError: No such session.
        NothingToResumeError: The session is a parallel branch of another, or it has no checkpoint and recorded
            no pipeline (it stopped before it did, under an older Orchestra) and `pipeline` is not given.
    """
    info = store.get_session(session_id)
    main = _main_session(store, info)
    if main != info.session_id:
        raise NothingToResumeError(
            f"session {info.session_id} ({info.metadata.title}) is a parallel branch of session {main}; "
            f"resume session {main}"
        )
    found = latest_checkpoint(store, info.session_id)
    if found is None:
        return _from_start(store, info.session_id, pipeline)
    return _from_checkpoint(store, RESUME, info.session_id, found, pipeline)


def _from_start(store: SessionStore, session_id: str, pipeline: Path | None) -> SessionStart:
    """The resume of a session with no checkpoint: its recorded start again, on its recorded branches."""
    began = recorded_start(store, session_id)
    if began is None and pipeline is None:
        raise NothingToResumeError(
            f"session {session_id} has no checkpoint and recorded no pipeline (it never started, or stopped before "
            f"it recorded one); start it from the beginning with `orchestra resume {session_id} --pipeline FILE`"
        )
    source = PipelineSource(began.dot_path, began.dot_blob) if began is not None else PipelineSource()
    text = _pipeline_text(store, source, pipeline)
    if pipeline is not None:
        source = PipelineSource(str(pipeline), store.put_blob(text.encode("utf-8")))
    initial = dict(began.initial_context) if began is not None else {}
    heads = recorded_branches(store, session_id)
    return SessionStart(RESUME, session_id, text, source, None, heads, from_start=True, initial_context=initial)


def start_replay(store: SessionStore, session_id: str, turn_id: str, pipeline: Path | None) -> SessionStart:
    """Plan the replay of a session from one of its turns: the checkpoint at or before that turn.

    The fork itself is made by `begin`, once the pipeline has validated, so a replay that cannot start
    leaves no session behind.

    Raises:
        SessionNotFoundError / TurnNotFoundError: The session or turn does not exist.
        NothingToResumeError: There is no checkpoint at or before the turn.
    """
    source = store.get_session(session_id)
    found = latest_checkpoint(store, source.session_id, at_turn_id=turn_id)
    if found is None and latest_checkpoint(store, source.session_id) is None:
        raise NothingToResumeError(
            f"session {source.session_id} has no checkpoint to fork a replay from; "
            f"{resume_advice(store, source.session_id)}"
        )
    if found is None:
        raise NothingToResumeError(
            f"session {source.session_id} has no checkpoint at or before turn {turn_id}; nothing to replay from"
        )
    main = _main_session(store, source)
    if main != source.session_id:
        raise NothingToResumeError(
            f"session {source.session_id} ({source.metadata.title}) is a parallel branch of session {main}; "
            f"replay the run from before its fan-out: orchestra replay {main} --checkpoint {found.turn.turn_id}"
        )
    start = _from_checkpoint(store, REPLAY, "", found, pipeline)
    at = store.get_turn(source.session_id, turn_id).turn_id
    return evolve(start, origin=(source.session_id, found.turn.turn_id), fork_at=at)


def begin(store: SessionStore, start: SessionStart) -> SessionStart:
    """The start with its session in place: a new run's session is created, a planned replay forks its
    session (O(1)) at this point."""
    if start.new_session is not None:
        info = store.create_session(start.new_session)
        return evolve(start, session_id=info.session_id, new_session=None)
    if start.fork_at is None or start.origin is None:
        return start
    fork = fork_session(store, start.origin[0], start.fork_at, spawn_reason="replay")
    return evolve(start, session_id=fork.session_id, fork_at=None)


def start_from_run_directory(
    store: SessionStore, session_id: str, checkpoint: Checkpoint, graph: Graph, pipeline_path: Path, text: str
) -> SessionStart:
    """Continue the run a run directory describes (its manifest's `session_id` and its `checkpoint.json`):
    the session keeps recording when the store has it, otherwise the continuation is recorded as a new one."""
    blob = store.put_blob(text.encode("utf-8"))
    source = PipelineSource(str(pipeline_path), blob)
    try:
        info = store.get_session(session_id)
    except SessionNotFoundError:  # created by `begin`, once the run's checks pass
        return SessionStart(RESUME, "", text, source, checkpoint, new_session=session_metadata(graph, pipeline_path))
    found = latest_checkpoint(store, info.session_id)
    recorded = repo_heads(found.checkpoint) if found is not None else {}
    # The run directory's checkpoint decides where the code is; the store knows the branches.
    heads = {
        name: evolve(head, sha=checkpoint.workspace_snapshot.get(name, head.sha)) for name, head in recorded.items()
    }
    return SessionStart(RESUME, info.session_id, text, source, checkpoint, heads)


def _main_session(store: SessionStore, info: SessionInfo) -> str:
    """The run a parallel branch's session belongs to (the session itself when it is a run)."""
    while info.metadata.spawn_reason == PARALLEL_SPAWN and info.metadata.parent_session_id:
        info = store.get_session(info.metadata.parent_session_id)
    return info.session_id


def session_metadata(graph: Graph, pipeline_path: Path) -> SessionMetadata:
    """What the store lists for a run: the pipeline's name and a one-line title."""
    name = graph.name or pipeline_path.stem
    title = graph.label or graph.goal or name
    return SessionMetadata(pipeline=name, title=title.splitlines()[0][:200] if title else "")


def _from_checkpoint(
    store: SessionStore, kind: str, session_id: str, found: Any, pipeline: Path | None
) -> SessionStart:
    record = found.checkpoint
    source = PipelineSource(record.pipeline_path, record.pipeline_blob)
    text = _pipeline_text(store, source, pipeline)
    if pipeline is not None:  # the run goes on with this file: later checkpoints must point at its text
        source = PipelineSource(str(pipeline), store.put_blob(text.encode("utf-8")))
    return SessionStart(
        kind, session_id, text, source, from_record(record, found.turn.created_at), repo_heads(record)
    )


def _pipeline_text(store: SessionStore, source: PipelineSource, override: Path | None) -> str:
    """The pipeline to continue with: the file given, else the recorded source, else the recorded file."""
    from orchestra_core.graph.dot_loader import read_pipeline_text

    if override is not None:
        return read_pipeline_text(override)
    if source.blob:
        return store.get_blob(source.blob).decode("utf-8")
    if source.path:
        return read_pipeline_text(Path(source.path))
    raise NothingToResumeError("the session does not record its pipeline; give the pipeline file with --pipeline")
