"""Server-sent event streams of a session: numbered events from the start (or after `Last-Event-ID`), then
live, until the run ends."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from starlette.concurrency import run_in_threadpool

from orchestra_adapters.server.runs import ServerRun
from orchestra_adapters.server.service import PipelineService

WAIT_S = 0.5  # how long a live stream stays quiet before it sends a keep-alive (and so learns its client left)
POLL_S = 0.05  # how often a live stream looks for new events: it waits on the event loop, holding no thread
STORE_POLL_S = 0.2  # how often a session running elsewhere is read again


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
        events, finished = run.events.after(last_id)  # no wait: a stream must not hold a worker thread
        for number, event in events:
            yield frame(number, str(event.get("kind", "event")), event)
            last_id = number
        if finished:
            yield frame(None, "end", run.to_json())
            return
        quiet = 0.0 if events else quiet + POLL_S
        if quiet >= WAIT_S:
            yield b": keep-alive\n\n"
            quiet = 0.0
        await anyio.sleep(POLL_S)


async def store_events(service: PipelineService, session_id: str, last_id: int) -> AsyncIterator[bytes]:
    """The turns of a session recorded in the store (run elsewhere, or before this server started), numbered
    in append order after `last_id`, followed until the run ends or its runner is gone."""
    import anyio

    from orchestra_core.ports.session_store import SessionStatus
    from orchestra_core.session.liveness import live_info
    from orchestra_core.session.trace import SessionTrace

    store = service.store
    trace = SessionTrace(store, session_id)
    numbered = _Numbered(last_id)
    yield b": orchestra events\n\n"
    while True:
        info = await run_in_threadpool(lambda: live_info(store, store.get_session(session_id), service.locks))
        for message in numbered.frames(await run_in_threadpool(trace.read)):
            yield message
        if trace.ended or info.status not in (SessionStatus.NEW, SessionStatus.RUNNING):
            if not trace.ended:  # what the runner recorded before it went
                for message in numbered.frames(await run_in_threadpool(trace.read)):
                    yield message
            yield frame(None, "end", {"id": session_id, "status": info.status.value})
            return
        await anyio.sleep(STORE_POLL_S)


class _Numbered:
    """Numbers stored turns in the order they are read, skipping those up to `last_id`."""

    def __init__(self, last_id: int) -> None:
        self._last_id = last_id
        self._number = 0

    def frames(self, views: list[Any]) -> list[bytes]:
        messages = []
        for view in views:
            self._number += 1
            if self._number > self._last_id:
                entry = view.to_json()
                kind = str(entry.get("type") or "turn").rsplit(".", 1)[-1]
                messages.append(frame(self._number, kind, {"kind": kind, **entry}))
        return messages
