"""BackgroundNotifier: the Notifier port over webhook and command targets, each with a thread of its own, a queue,
and bounded retries with exponential backoff; the run never waits, except at its end, for a bounded time."""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections import deque
from collections.abc import Sequence

from attrs import define, field, frozen

from orchestra_adapters.notify.targets import Attempt, Target
from orchestra_core.model.notifications import Notification, NotifyEvent
from orchestra_core.model.records import NotificationFailed
from orchestra_core.ports.notifier import OnDeliveryFailure


@frozen
class RetryPolicy:
    """How often a delivery is tried, and how long it waits in between.

    Attributes:
        attempts: Tries in all (the first one included).
        first_delay_s: The wait after the first failed try; each next wait is `factor` times longer.
        factor: The backoff factor.
        max_delay_s: No wait is longer.
    """

    attempts: int = 3
    first_delay_s: float = 0.5
    factor: float = 2.0
    max_delay_s: float = 30.0

    def delay_after(self, attempt: int) -> float:
        """The wait after failed try number `attempt` (1-based) before the next one."""
        return float(min(self.first_delay_s * self.factor ** (attempt - 1), self.max_delay_s))

    def delays(self) -> list[float]:
        """Every wait between the tries, in order."""
        return [self.delay_after(attempt) for attempt in range(1, self.attempts)]


@define(eq=False)
class _Delivery:
    """One notification for one target, through its tries."""

    notification: Notification
    on_failure: OnDeliveryFailure | None
    sequence: int
    id: str = field(factory=lambda: uuid.uuid4().hex)
    attempts: int = 0
    reason: str = ""
    abandoned: bool = False
    reported: bool = False


class _TargetWorker:
    """One target's queue and thread: its deliveries in order, each through its tries."""

    def __init__(self, target: Target, policy: RetryPolicy) -> None:
        self.target = target
        self._policy = policy
        self._queue: deque[_Delivery] = deque()
        self._current: _Delivery | None = None
        self._handed = 0  # sequence number of the latest delivery handed over
        self._finished = 0  # ... and of the latest one finished (delivered, given up or abandoned)
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False

    def put(self, notification: Notification, on_failure: OnDeliveryFailure | None) -> None:
        with self._changed:
            if self._closed:
                return
            self._handed += 1
            self._queue.append(_Delivery(notification, on_failure, self._handed))
            if self._thread is None:
                self._thread = threading.Thread(target=self._work, name="orchestra-notify", daemon=True)
                self._thread.start()
            self._changed.notify_all()

    def mark(self) -> int:
        """The sequence number of the latest delivery handed over (what a flush waits for)."""
        with self._changed:
            return self._handed

    def wait_for(self, mark: int, deadline: float) -> None:
        """Until every delivery up to `mark` finished, or `deadline` (monotonic) passed."""
        with self._changed:
            self._changed.wait_for(lambda: self._finished >= mark, timeout=max(deadline - time.monotonic(), 0.0))

    def abandon(self, mark: int, why: str) -> None:
        """Give up every delivery up to `mark` that has not finished, reporting each as failed."""
        with self._changed:
            given_up = [delivery for delivery in self._queue if delivery.sequence <= mark]
            for delivery in given_up:
                self._queue.remove(delivery)
                self._finished = max(self._finished, delivery.sequence)
            current = self._current
            if current is not None and current.sequence <= mark:
                given_up.append(current)
            for delivery in given_up:
                delivery.abandoned = True
            self._changed.notify_all()
        for delivery in given_up:
            last = f" (last try: {delivery.reason})" if delivery.reason else ""
            self._report(delivery, f"{why}{last}")

    def close(self) -> None:
        """Stop: queued deliveries are dropped, the one under way ends with its try."""
        with self._changed:
            self._closed = True
            self._queue.clear()
            self._changed.notify_all()
        close = getattr(self.target, "close", None)
        if close is not None:
            close()

    def _work(self) -> None:
        while True:
            with self._changed:
                self._changed.wait_for(lambda: self._queue or self._closed)
                if not self._queue:
                    return
                delivery = self._current = self._queue.popleft()
            try:
                self._deliver(delivery)
            finally:
                with self._changed:
                    self._current = None
                    self._finished = max(self._finished, delivery.sequence)
                    self._changed.notify_all()

    def _deliver(self, delivery: _Delivery) -> None:
        policy = self._policy
        for attempt in range(1, policy.attempts + 1):
            result = self._try(delivery)
            if delivery.abandoned:  # reported by whoever gave it up
                return
            delivery.attempts = attempt
            if result.delivered:
                return
            delivery.reason = result.reason
            if not result.retry or attempt == policy.attempts:
                break
            with self._changed:  # a wait that the end of the run cuts short
                self._changed.wait_for(lambda: delivery.abandoned or self._closed, timeout=policy.delay_after(attempt))
                if delivery.abandoned or self._closed:
                    return
        self._report(delivery, delivery.reason)

    def _try(self, delivery: _Delivery) -> Attempt:
        try:
            return self.target.send(delivery.notification, delivery.id)
        except Exception as error:  # a target must not end its thread
            return Attempt(False, f"internal error: {type(error).__name__}")

    def _report(self, delivery: _Delivery, reason: str) -> None:
        with self._changed:
            if delivery.reported:
                return
            delivery.reported = True
        if delivery.on_failure is None:
            return
        record = NotificationFailed(self.target.name, delivery.notification.event.value, delivery.attempts, reason)
        with contextlib.suppress(Exception):  # recording is best effort; the worker goes on
            delivery.on_failure(record)


class BackgroundNotifier:
    """The Notifier port: each target has a thread that takes its notifications in order and tries each up to
    `policy.attempts` times, with exponential backoff between tries. `notify` only queues; `flush` waits."""

    def __init__(self, targets: Sequence[Target], policy: RetryPolicy | None = None) -> None:
        self._workers = [_TargetWorker(target, policy or RetryPolicy()) for target in targets]

    @property
    def targets(self) -> list[Target]:
        return [worker.target for worker in self._workers]

    def wants(self, event: NotifyEvent) -> bool:
        return any(worker.target.wants(event.value) for worker in self._workers)

    def notify(self, notification: Notification, on_failure: OnDeliveryFailure | None = None) -> None:
        for worker in self._workers:
            if worker.target.wants(notification.event.value):
                worker.put(notification, on_failure)

    def flush(self, timeout_s: float) -> None:
        deadline = time.monotonic() + max(timeout_s, 0.0)
        marks = [(worker, worker.mark()) for worker in self._workers]
        for worker, mark in marks:
            worker.wait_for(mark, deadline)
        for worker, mark in marks:
            worker.abandon(mark, f"given up {timeout_s:g}s after the run ended")

    def close(self) -> None:
        """Stop every target's thread (after `flush`, nothing is left to lose)."""
        for worker in self._workers:
            worker.close()
