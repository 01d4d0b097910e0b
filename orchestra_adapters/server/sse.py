"""Server-sent event streams of a session: numbered events from the start (or after `Last-Event-ID`), then
live, until the run ends. A run started here numbers its engine events; a recorded session's turns are numbered by
their turn ids."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from starlette.concurrency import run_in_threadpool

from orchestra_adapters.server.event_log import is_dropped
from orchestra_adapters.server.runs import ServerRun
from orchestra_adapters.server.service import PipelineService

WAIT_S = 0.5  # how long a live stream stays quiet before it sends a keep-alive (and so learns its client left)
POLL_S = 0.05  # how often a live stream looks for new events: it waits on the event loop, holding no thread
STORE_POLL_S = 0.2  # how often a session running elsewhere is read again
PAGE = 64  # events of a run, or turns of a recorded session, read at once


def frame(event_id: int | None, kind: str, data: dict[str, Any]) -> bytes:
    """One SSE message: `id:` (when numbered), `event:` and one `data:` line of JSON."""
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {kind}\ndata: {json.dumps(data, ensure_ascii=False, default=str)}\n\n".encode()


async def run_events(run: ServerRun, last_id: int) -> AsyncIterator[bytes]:
    """The events of a run started here, after `last_id`, then an `end` message with its status."""
    import anyio

    yield b": orchestra events\n\n"
    quiet = 0.0
    while True:
        # No wait: a stream must not hold a worker thread. A page at a time, so a long run's first event is as quick.
        events, finished = run.events.after(last_id, limit=PAGE)
        for number, event in events:
            if not is_dropped(event):  # live activity the log let go (a node's is kept while it runs)
                yield frame(number, str(event.get("kind", "event")), event)
            last_id = number
        if finished:
            yield frame(None, "end", run.to_json())
            return
        if len(events) == PAGE:
            continue
        quiet = 0.0 if events else quiet + POLL_S
        if quiet >= WAIT_S:
            yield b": keep-alive\n\n"
            quiet = 0.0
        await anyio.sleep(POLL_S)


async def store_events(
    service: PipelineService, session_id: str, after: str | None, *, reconnected: bool = False
) -> AsyncIterator[bytes]:
    """The turns of a session recorded in the store (run elsewhere, or before this server started), its branch
    sessions' included, in append order after turn `after` (from the start when None), each numbered by its turn
    id; followed until the run ends or its runner is gone. Read a page at a time from where the stream stands, so
    neither the first event nor a reconnection costs more for a longer session. Between them, the agents' live
    activity its runner writes (console/live_activity.py), without ids: what the file holds at first, or only what
    comes next for a stream `reconnected` (which saw the rest)."""
    import anyio

    from orchestra_adapters.console.live_activity import ActivityTail, activity_path
    from orchestra_adapters.console.run_channel import ChannelError
    from orchestra_core.model.layout import ProjectLayout
    from orchestra_core.ports.session_store import SessionStatus
    from orchestra_core.session.liveness import live_info
    from orchestra_core.session.pages import merged_range, run_lines

    store = service.store
    try:
        tail: ActivityTail | None = ActivityTail(
            activity_path(ProjectLayout(service.project_root).state_dir, session_id), from_start=not reconnected
        )
    except ChannelError:
        tail = None
    yield b": orchestra events\n\n"
    while True:
        info = await run_in_threadpool(lambda: live_info(store, store.get_session(session_id), service.locks))
        lines = await run_in_threadpool(run_lines, store, session_id)
        more = True
        while (
            more
        ):  # everything recorded up to now, page by page (after `info`: nothing before an ending is lost)
            views, more = await run_in_threadpool(merged_range, store, lines, after, PAGE)
            for view in views:
                yield turn_frame(view)
                after = view.turn_id
        for activity in await run_in_threadpool(tail.read) if tail is not None else ():
            yield frame(None, "AgentActivity", activity)
        if info.status not in (SessionStatus.NEW, SessionStatus.RUNNING):
            yield frame(None, "end", {"id": session_id, "status": info.status.value})
            return
        await anyio.sleep(STORE_POLL_S)


def turn_frame(view: Any) -> bytes:
    """A stored turn as an SSE message: its turn id, its type's last name as the event, its JSON view."""
    entry = view.to_json()
    kind = str(entry.get("type") or "turn").rsplit(".", 1)[-1]
    return frame(int(view.turn_id), kind, {"kind": kind, **entry})
