"""The Tracer contract: spans arrive as they were exported (ids, parents, times, attributes, statuses, events,
links), `export` never blocks or raises, `flush` keeps its time bound, `close` ends it for good."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta

from orchestra_core.model.spans import Span, SpanContext, SpanEvent, SpanKind, SpanLink, SpanStatus
from orchestra_core.ports.tracer import Tracer
from orchestra_core.testing.contracts._base import PortContract, requires

T0 = datetime(2026, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)
TRACE = 0x0AF7651916CD43DD8448EB211C80319C
FLUSH_S = 10.0


def sample_spans(trace_id: int = TRACE, first_id: int = 1) -> list[Span]:
    """A root, a model call under it and a failed tool call under that: every kind of attribute value,
    events, a link, each status."""
    root = SpanContext(trace_id, first_id)
    turn = SpanContext(trace_id, first_id + 1)
    tool = SpanContext(trace_id, first_id + 2)
    other = SpanContext(0x1234, 0x5678)
    return [
        Span(
            name="execute_tool repo:write-file", context=tool, parent=turn, start=T0 + timedelta(seconds=1),
            end=T0 + timedelta(seconds=1, microseconds=2500), attributes={"gen_ai.tool.name": "repo:write-file"},
            status=SpanStatus.ERROR, status_message="no such file: é/ü.txt",
        ),
        Span(
            name="chat claude-sonnet-4", context=turn, parent=root, start=T0 + timedelta(milliseconds=5),
            end=T0 + timedelta(seconds=2), kind=SpanKind.CLIENT,
            attributes={
                "gen_ai.request.model": "claude-sonnet-4", "gen_ai.usage.input_tokens": 1234,
                "orchestra.cost_usd": 0.0125, "orchestra.untracked": False, "orchestra.commit.files": ("a.py", "b/c.py"),
            },
        ),
        Span(
            name="run review", context=root, parent=None, start=T0, end=T0 + timedelta(seconds=3),
            attributes={"orchestra.session_id": "42"}, status=SpanStatus.OK,
            events=(SpanEvent("loop_restart", T0 + timedelta(seconds=2, microseconds=7), {"orchestra.restart_count": 1}),),
            links=(SpanLink(other, {"orchestra.link": "replay_of"}),),
        ),
    ]  # fmt: skip


class TracerContract(PortContract):
    """A runner implements `make_tracer()` and `received(tracer)`; with the optional `unreachable` capability,
    `make_unreachable_tracer()` too."""

    OPTIONAL_CAPABILITIES = frozenset({"unreachable"})

    def make_tracer(self) -> Tracer:
        """A tracer whose destination works (closed after the test by the runner, or here)."""
        raise NotImplementedError

    def received(self, tracer: Tracer) -> list[Span]:
        """Every span the tracer's destination got so far, read back as Span records."""
        raise NotImplementedError

    def make_unreachable_tracer(self) -> Tracer:
        """A tracer whose destination never answers or refuses every connection (`unreachable` capability)."""
        raise NotImplementedError

    def _tracer(self) -> Tracer:
        tracer = self.make_tracer()
        self.add_cleanup(tracer.close)
        return tracer

    def test_is_a_tracer(self) -> None:
        assert isinstance(self._tracer(), Tracer)

    def test_spans_arrive_as_they_were_exported(self) -> None:
        tracer = self._tracer()
        spans = sample_spans()
        for span in spans:
            tracer.export(span)
        assert tracer.flush(FLUSH_S) is True
        by_id = {span.context.span_id: span for span in self.received(tracer)}
        assert by_id == {span.context.span_id: span for span in spans}

    def test_flush_with_nothing_queued_returns_at_once(self) -> None:
        tracer = self._tracer()
        started = time.monotonic()
        assert tracer.flush(FLUSH_S) is True
        assert time.monotonic() - started < 1.0

    def test_many_spans_from_many_threads_all_arrive(self) -> None:
        tracer = self._tracer()
        batches = [sample_spans(TRACE + n, 10 * n + 1) for n in range(400)]

        def send(part: list[list[Span]]) -> None:
            for batch in part:
                for span in batch:
                    tracer.export(span)

        threads = [threading.Thread(target=send, args=(batches[n::4],)) for n in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert tracer.flush(FLUSH_S) is True
        received = {(span.context.trace_id, span.context.span_id) for span in self.received(tracer)}
        assert received == {(span.context.trace_id, span.context.span_id) for batch in batches for span in batch}

    def test_exporting_never_waits_for_the_destination(self) -> None:
        tracer = self._tracer()
        started = time.monotonic()
        for n in range(300):
            for span in sample_spans(TRACE + n, 10 * n + 1):
                tracer.export(span)
        assert time.monotonic() - started < 1.0

    def test_spans_after_close_are_dropped_and_close_twice_is_harmless(self) -> None:
        tracer = self.make_tracer()
        first, *rest = sample_spans()
        tracer.export(first)
        assert tracer.flush(FLUSH_S) is True
        tracer.close()
        for span in rest:
            tracer.export(span)  # never raises
        tracer.close()
        assert [span.context for span in self.received(tracer)] == [first.context]

    @requires("unreachable")
    def test_an_unreachable_destination_neither_raises_nor_holds_flush_past_its_bound(self) -> None:
        tracer = self.make_unreachable_tracer()
        self.add_cleanup(tracer.close)
        for span in sample_spans():
            tracer.export(span)
        started = time.monotonic()
        assert tracer.flush(1.0) is False
        assert time.monotonic() - started < 2.0
        closing = time.monotonic()
        tracer.close()
        assert time.monotonic() - closing < 2.0
