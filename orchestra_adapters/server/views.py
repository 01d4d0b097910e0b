"""What the read endpoints answer: sessions, a pipeline's status, checkpoint, context and graph, from the runs
started here and from the session store."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from attrs import frozen

from orchestra_adapters.server.service import PipelineService, RequestError

MAX_PAGE = 1000
_STORE_STATUS = {"success": "success", "fail": "fail", "cancelled": "cancelled", "budget_exceeded": "budget_exceeded"}


@frozen
class SessionQuery:
    """A page of a session's turns: `limit` turns after `after` (from the start), or with `last` the session's
    recent end (`limit` agent turns), or the `limit` turns before `before`."""

    limit: int
    after: str | None = None
    before: str | None = None
    last: bool = False

    @classmethod
    def of(cls, params: Mapping[str, str]) -> SessionQuery | None:
        """The query of `?limit=N&after=TURN` or `?last=N[&before=TURN]`; None without one (the whole session).

        Raises:
            RequestError: A value is not a positive whole number, or the two kinds are mixed.
        """
        if not {"limit", "after", "last", "before"} & set(params):
            return None
        if "last" in params:
            if "limit" in params or "after" in params:
                raise RequestError(
                    400, "give last=N (and before=TURN), or limit=N (and after=TURN), not both"
                )
            return cls(_positive(params, "last"), before=params.get("before"), last=True)
        if "before" in params:
            raise RequestError(400, "before=TURN goes with last=N")
        return cls(_positive(params, "limit") if "limit" in params else 50, after=params.get("after"))


def _positive(params: Mapping[str, str], key: str) -> int:
    raw = params[key]
    if not (raw.isascii() and raw.isdigit()) or int(raw) < 1 or int(raw) > MAX_PAGE:
        raise RequestError(400, f"{key} {raw!r} must be a whole number from 1 to {MAX_PAGE}")
    return int(raw)


def _store(service: PipelineService, session_id: str) -> Any:
    store = service.store
    if store is None:
        raise RequestError(404, f"no session {session_id!r}")
    return store


def _session_info(service: PipelineService, session_id: str) -> Any:
    from orchestra_core.model.store_errors import SessionNotFoundError
    from orchestra_core.session.liveness import live_info

    store = _store(service, session_id)
    try:
        return live_info(store, store.get_session(session_id), service.locks)
    except SessionNotFoundError:
        raise RequestError(404, f"no session {session_id!r}") from None


def pipeline_status(service: PipelineService, session_id: str) -> dict[str, Any]:
    """`{"id", "status", "completed_nodes", "current_node", "error"}`; a stored session's `status` is its
    store status where that is not one of running/success/fail/cancelled/budget_exceeded (`new`, `interrupted`); a
    session a budget stopped has the stop's message (how to continue) as its `error`."""
    run = service.run_of(session_id)
    if run is not None:
        return run.to_json()
    info = _session_info(service, session_id)
    checkpoint = _latest_checkpoint(service, session_id)
    status = info.status.value
    shown = _STORE_STATUS.get(status, "running" if status == "running" else status)
    return {
        "id": session_id,
        "status": shown,
        "completed_nodes": list(checkpoint.completed_nodes) if checkpoint else [],
        "current_node": checkpoint.next_node if checkpoint and shown == "running" else None,
        "error": _ending_error(service, session_id) if status == "budget_exceeded" else (
            (checkpoint.failure_reason or None) if checkpoint else None
        ),
    }


def _ending_error(service: PipelineService, session_id: str) -> str | None:
    """The error the session's latest lifecycle turn recorded (a budget's stop message)."""
    from orchestra_core.session.recent import recent_session_summary

    summary = recent_session_summary(_store(service, session_id), session_id, service.locks)
    return summary.ending.error if summary.ending is not None else None


def _latest_checkpoint(service: PipelineService, session_id: str) -> Any:
    from orchestra_core.session.api import latest_checkpoint
    from orchestra_core.session.checkpoints import from_record

    found = latest_checkpoint(_store(service, session_id), session_id)
    return None if found is None else from_record(found.checkpoint, found.turn.created_at)


def checkpoint_json(service: PipelineService, session_id: str) -> dict[str, Any]:
    """The latest checkpoint, shaped as the run directory's checkpoint.json, with its session id."""
    from orchestra_adapters.filesystem.checkpoint_codec import CheckpointEncoder

    _known(service, session_id)
    checkpoint = _latest_checkpoint(service, session_id)
    if checkpoint is None:
        raise RequestError(404, f"session {session_id} has no checkpoint yet")
    return {"session_id": session_id, **json.loads(CheckpointEncoder().encode(checkpoint))}


def context_json(service: PipelineService, session_id: str) -> dict[str, Any]:
    """The latest checkpoint's context: `{"session_id", "node_id", "context": {key: value}}`."""
    from orchestra_adapters.server.event_log import plain

    _known(service, session_id)
    checkpoint = _latest_checkpoint(service, session_id)
    if checkpoint is None:
        raise RequestError(404, f"session {session_id} has no checkpoint yet")
    return {"session_id": session_id, "node_id": checkpoint.current_node, "context": plain(dict(checkpoint.context))}


def _known(service: PipelineService, session_id: str) -> None:
    if service.run_of(session_id) is None:
        _session_info(service, session_id)


def sessions_json(service: PipelineService, limit: int) -> dict[str, Any]:
    """`orchestra status --json`'s document; sessions running here show their live status, and `waiting`: true
    while one waits for a human (a gate's question or an interactive node's next message)."""
    from orchestra_core.session.listing import list_session_rows

    store = service.store
    rows = list_session_rows(store, limit=limit, locks=service.locks) if store is not None else []
    sessions = [row.to_json() for row in rows]
    for session in sessions:
        run = service.run_of(session["session_id"])
        if run is not None:
            session["status"] = run.status
        if run is not None:
            session["waiting"] = run.running and waits_for_human(run)
        else:
            session["waiting"] = session["status"] == "running" and _waits_elsewhere(service, session["session_id"])
    return {"sessions": sessions}


def _waits_elsewhere(service: PipelineService, session_id: str) -> bool:
    """Whether a run started from the CLI (its runner alive: the row says `running`) published a wait on its
    attach channel (.orchestra/attach/<id>/waiting.json)."""
    channel = run_channel(service, session_id)
    return channel is not None and channel.waiting() is not None


def run_channel(service: PipelineService, session_id: str) -> Any:
    """The attach channel of a session's run in another process (None: the id cannot name one)."""
    from orchestra_adapters.console.run_channel import ChannelError, RunChannel, channel_dir
    from orchestra_core.model.layout import ProjectLayout

    try:
        return RunChannel(channel_dir(ProjectLayout(service.project_root).state_dir, session_id))
    except ChannelError:
        return None


def waits_for_human(run: Any) -> bool:
    """Whether a run served here waits for a person: a question pending, or its chat waiting for a message."""
    interviewer = run.interviewer
    if interviewer is None:
        return False
    chat = getattr(interviewer, "chat", None)
    return bool(interviewer.pending()) or bool(chat is not None and chat.waiting)


def session_json(
    service: PipelineService, session_id: str, query: SessionQuery | None = None
) -> dict[str, Any]:
    """`orchestra status SESSION --json`'s document: the whole session, or one page of its turns (`query`)."""
    from orchestra_core.session.pages import PageError, latest_page, session_page
    from orchestra_core.session.summary import session_summary

    _session_info(service, session_id)
    store = _store(service, session_id)
    try:
        if query is None:
            document = session_summary(store, session_id, service.locks).to_json()
        elif query.last:
            page = latest_page(store, session_id, service.locks, limit=query.limit, before=query.before)
            document = {**page.to_json(), "events_after": _events_after(store, page)}
        else:
            document = session_page(
                store, session_id, service.locks, limit=query.limit, after=query.after
            ).to_json()
    except PageError as error:
        raise RequestError(400, str(error)) from None
    run = service.run_of(session_id)
    if run is not None:
        document["status"] = run.status
    return dict(document)


def _events_after(store: Any, page: Any) -> str | None:
    """Where an event stream that replays the page's turns starts (`?after=`): the turn before its first; None
    when nothing comes before it (the stream starts at the beginning)."""
    if not page.has_earlier or not page.summary.turns:
        return None
    first = page.summary.turns[0]
    return str(store.get_turn(first.session_id, first.turn_id).parent_turn_id or "") or None


def stream_start(service: PipelineService, session_id: str, last: str) -> str | None:
    """The turn a recorded session's event stream starts after: None for `0` (from the start), else `last` once it
    is found among the turns of the session or of its branch sessions."""
    from orchestra_core.session.pages import PageError, checked_after, run_lines

    if int(last) == 0:
        return None
    store = _store(service, session_id)
    try:
        return checked_after(store, run_lines(store, session_id), last)
    except PageError as error:
        raise RequestError(400, f"Last-Event-ID {last!r}: {error}") from None


def pipeline_text(service: PipelineService, session_id: str) -> str:
    """The DOT source a session runs: as submitted here, else as recorded with its latest checkpoint (or, before
    its first one, with its start)."""
    run = service.run_of(session_id)
    if run is not None:
        return run.pipeline_text
    from orchestra_core.session.api import latest_checkpoint

    _session_info(service, session_id)
    from orchestra_core.session.restart import recorded_start

    store = _store(service, session_id)
    found = latest_checkpoint(store, session_id)
    blob = found.checkpoint.pipeline_blob if found is not None else None
    if found is None:  # stopped before its first checkpoint: the pipeline its start recorded
        began = recorded_start(store, session_id)
        blob = began.dot_blob if began is not None else None
    if not blob:
        raise RequestError(404, f"session {session_id} has no recorded pipeline yet")
    return str(store.get_blob(blob).decode("utf-8"))


def graph_svg(service: PipelineService, session_id: str, *, legend: bool = True) -> bytes:
    """The pipeline drawn by Graphviz as SVG; each node's group has `id="node-<node id>"` and the classes
    `node` and `handler-<handler type>`, for a page to colour by status; `legend`: with the legend of shapes."""
    from orchestra_adapters.render.graph_renderer import build_drawing
    from orchestra_core.graph.dot_loader import parse_dot
    from orchestra_core.model.errors import OrchestraError
    from orchestra_core.pipeline import prepare_pipeline

    text = pipeline_text(service, session_id)
    try:
        graph = prepare_pipeline(parse_dot(text, path=f"{session_id}.dot")).graph
        drawing = build_drawing(graph, legend=legend)
        for node in graph.nodes.values():
            shown = drawing.get_node(node.id)
            shown.attr["id"] = f"node-{node.id}"
            shown.attr["class"] = f"handler-{node.handler_type}"
        return bytes(drawing.draw(format="svg", prog="dot"))
    except (OrchestraError, OSError, ValueError) as error:
        raise RequestError(422, f"cannot draw the pipeline of session {session_id}: {error}") from None
