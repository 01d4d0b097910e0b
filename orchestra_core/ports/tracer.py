"""Tracer port: where a traced run's spans go (an OpenTelemetry collector over OTLP, a test's list)."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from orchestra_core.model.spans import Span


@runtime_checkable
class Tracer(Protocol):
    """Sends finished spans somewhere, in the background.

    The run builds its spans from its own events (`orchestra_core.runs.tracing`) and hands each one over when
    it ends; the engine never sees the tracer. A run without a tracer (`RunPorts.tracer` None) builds no span
    at all. A tracer is shared by the runs of a process and closed by whoever made it.

    No method raises or blocks the run: a destination that cannot be reached loses spans (and says so once,
    in the adapter's own way), never the run.
    """

    def export(self, span: Span) -> None:
        """Queue one finished span; returns at once. After `close`, spans are dropped."""
        ...

    def flush(self, timeout_s: float) -> bool:
        """Send what is queued, waiting at most `timeout_s` seconds.

        Returns:
            Whether every span queued so far was delivered.
        """
        ...

    def close(self) -> None:
        """Stop sending (what is still queued may be lost: `flush` first); calling it again does nothing."""
        ...
