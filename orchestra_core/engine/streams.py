"""A run's events as iterators: the run goes on in a worker thread while the caller iterates (sync or async)."""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

Start = Callable[[Callable[[Any], None]], Any]
"""Starts the run: takes the callback every event goes to, returns the run's result."""

_END = object()


class EventStream(Iterator[Any]):
    """Runs `start` in a background thread and yields the run's events as they happen.

    `start` receives the callback to pass as `on_event` and returns the run's result, available as
    `result` once the iteration ended. An error of the run is raised by the iteration, after the events
    that came before it.
    """

    def __init__(self, start: Start) -> None:
        self._queue: queue.Queue[Any] = queue.Queue()
        self._result: Any = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(start,), name="orchestra-run", daemon=True)
        self._thread.start()

    def _run(self, start: Start) -> None:
        try:
            self._result = start(self._queue.put)
        except BaseException as error:  # raised again in the consuming thread
            self._error = error
        finally:
            self._queue.put(_END)

    def __next__(self) -> Any:
        item = self._queue.get()
        if item is _END:
            self._queue.put(_END)
            self._thread.join()
            if self._error is not None:
                raise self._error
            raise StopIteration
        return item

    @property
    def result(self) -> Any:
        """The run's result (waits for the run to end)."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._result


class AsyncEventStream(AsyncIterator[Any]):
    """The async form of EventStream: the run goes on in a worker thread, events arrive on the event loop.

    Iterate with `async for`; `await stream.result()` gives the run's result (and raises its error).
    """

    def __init__(self, start: Start) -> None:
        self._loop = asyncio.get_running_loop()
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._task = self._loop.run_in_executor(None, self._run, start)

    def _run(self, start: Start) -> Any:
        def emit(event: Any) -> None:
            self._loop.call_soon_threadsafe(self._queue.put_nowait, event)

        try:
            return start(emit)
        finally:
            self._loop.call_soon_threadsafe(self._queue.put_nowait, _END)

    def __aiter__(self) -> AsyncEventStream:
        return self

    async def __anext__(self) -> Any:
        item = await self._queue.get()
        if item is _END:
            self._queue.put_nowait(_END)
            await self._task  # raises the run's error, if any
            raise StopAsyncIteration
        return item

    async def result(self) -> Any:
        """The run's result, once it ended (raises the run's error)."""
        return await self._task
