"""Cancellation: how the engine stops a stage attempt it gave up on (its node timed out) before any retry starts.

A `Cancellation` is a `threading.Event` that also runs callbacks when it is set. The engine makes one per
attempt (`StageRun.cancel`) and sets it when the attempt runs out of time. The work of the attempt stops on
it in one of two ways:

- *callbacks* for work that blocks: a command runner registers "kill this process group" while a command runs
  (`on_cancel`), so the group dies the moment the attempt is cancelled;
- *checks* for work that loops: an agent loop calls `raise_if_cancelled()` before each model call and each tool
  call, so nothing is written after the cancellation.

A softer request, `stop_turns(TurnStop(...))`, asks an agent loop to stop at its next turn boundary (a budget was
reached): the turn in flight finishes, is committed and recorded; no new model call starts (`raise_if_stopped()`
before each model call raises `TurnsStopped`); nothing is killed.

The ports take it explicitly (`CommandRunner.run(..., cancel=)`, `CodergenBackend.run(..., cancel=)`); for code
between them that does not pass it on (an agent's command tools, hooks), the engine also makes it the thread's
*current* cancellation while the handler runs (`current_cancellation()`), which runners use when given none.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Callable, Iterator

from attrs import frozen

from orchestra_core.model.errors import OrchestraError

_CURRENT: contextvars.ContextVar[Cancellation | None] = contextvars.ContextVar("orchestra_cancellation", default=None)


class StageCancelled(OrchestraError):
    """The work was cancelled (its stage ran out of time); raised by `raise_if_cancelled`."""

    retryable = False


@frozen
class TurnStop:
    """Why an agent loop must stop at its next turn boundary, and whether its node then fails (its own budget is
    reached: the node fails and its edges route it) or is stopped (the session's budget: the run ends)."""

    reason: str
    fails_node: bool = False


class TurnsStopped(OrchestraError):
    """Raised by `raise_if_stopped` once a turn stop was asked: no new model call starts."""

    retryable = False

    def __init__(self, stop: TurnStop) -> None:
        super().__init__(stop.reason)
        self.stop = stop


class Cancellation(threading.Event):
    """A cancel flag for one stage attempt: `set()` (or `cancel()`) flags it and runs the registered callbacks.

    Args:
        reason: Why it would be cancelled, for messages (the engine sets it when it cancels).
    """

    def __init__(self, reason: str = "the stage was cancelled") -> None:
        super().__init__()
        self.reason = reason
        self.stops_running_work = False  # cancel(): yes; a bare set() (first_success) only stops at node boundaries
        self.turn_stop: TurnStop | None = None  # stop_turns(): stop at the next turn boundary
        self._callbacks: dict[int, Callable[[], None]] = {}
        self._next = 0
        self._guard = threading.Lock()

    def cancel(self, reason: str | None = None) -> None:
        """Cancel, saying why: the work running now stops too (see `linked`), not only at its next node."""
        if reason is not None and not self.is_set():
            self.reason = reason
        self.stops_running_work = True
        self.set()

    def set(self) -> None:
        """Flag the cancellation, then run every registered callback once (errors in them are ignored)."""
        with self._guard:
            callbacks, self._callbacks = list(self._callbacks.values()), {}
            super().set()
        for callback in callbacks:
            with contextlib.suppress(Exception):
                callback()

    @property
    def cancelled(self) -> bool:
        return self.is_set()

    def on_cancel(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Run `callback` when cancelled (at once when already cancelled); returns a function that unregisters it."""
        with self._guard:
            if not self.is_set():
                key, self._next = self._next, self._next + 1
                self._callbacks[key] = callback
                return lambda: self._forget(key)
        with contextlib.suppress(Exception):
            callback()
        return lambda: None

    def raise_if_cancelled(self) -> None:
        """Raise StageCancelled when cancelled.

        Raises:
            StageCancelled: The cancellation is set; the message says why.
        """
        if self.is_set():
            raise StageCancelled(self.reason)

    def stop_turns(self, stop: TurnStop) -> None:
        """Ask the work to stop at its next turn boundary (the first request counts); nothing is killed."""
        with self._guard:
            if self.turn_stop is None:
                self.turn_stop = stop

    def raise_if_stopped(self) -> None:
        """Before a model call: raise when cancelled, or when a stop at the turn boundary was asked.

        Raises:
            StageCancelled: The cancellation is set.
            TurnsStopped: `stop_turns` was called.
        """
        self.raise_if_cancelled()
        stop = self.turn_stop
        if stop is not None:
            raise TurnsStopped(stop)

    def _forget(self, key: int) -> None:
        with self._guard:
            self._callbacks.pop(key, None)


@contextlib.contextmanager
def linked(parent: threading.Event | None, child: Cancellation) -> Iterator[None]:
    """While inside, `child` is cancelled when `parent` is `cancel()`ed (a timed-out fan-out cancels the nodes its
    branches are running); a bare `set()` of the parent (first_success) leaves running work alone."""

    def follow() -> None:
        if isinstance(parent, Cancellation) and parent.stops_running_work:
            child.cancel(parent.reason)

    with on_cancel(parent, follow):
        yield


def current_cancellation() -> Cancellation | None:
    """The cancellation of the stage attempt running in this thread (None outside of one)."""
    return _CURRENT.get()


@contextlib.contextmanager
def cancellation_scope(cancel: Cancellation | None) -> Iterator[None]:
    """Make `cancel` the current cancellation for the code run inside."""
    token = _CURRENT.set(cancel)
    try:
        yield
    finally:
        _CURRENT.reset(token)


@contextlib.contextmanager
def on_cancel(cancel: threading.Event | None, callback: Callable[[], None]) -> Iterator[None]:
    """Run `callback` if `cancel` (a Cancellation) is set while inside; a plain Event or None does nothing."""
    if not isinstance(cancel, Cancellation):
        yield
        return
    forget = cancel.on_cancel(callback)
    try:
        yield
    finally:
        forget()


def takes_cancel(function: Callable[..., object]) -> bool:
    """Whether a port method takes the `cancel` keyword (ports written before it existed do not)."""
    return takes_keyword(function, "cancel")


def takes_keyword(function: Callable[..., object], name: str) -> bool:
    """Whether a port method takes the keyword `name` (implementations written before it existed do not)."""
    import inspect

    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == name or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)
