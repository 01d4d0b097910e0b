"""The OTLP/HTTP tracer's behaviour past the contract: one warning naming the collector and why, a refusing or
down collector never held on, a bounded queue, the resource it reports."""

from __future__ import annotations

import time

import pytest

from orchestra_adapters.telemetry import otlp_tracer
from orchestra_adapters.telemetry.export_settings import TraceExport
from orchestra_adapters.telemetry.otlp_tracer import OtlpTracer
from orchestra_core.testing.contracts.tracer import sample_spans
from tests.contracts.tracer.test_tracers import closed_port
from tests.support.otlp_receiver import OtlpReceiver


def _tracer(url: str, warnings: list[str], **export: object) -> OtlpTracer:
    return OtlpTracer(TraceExport(url, **export), warn=warnings.append)  # type: ignore[arg-type]


def test_a_refused_connection_is_said_once_and_flush_gives_up_at_once() -> None:
    warnings: list[str] = []
    url = f"http://127.0.0.1:{closed_port()}/v1/traces"
    tracer = _tracer(url, warnings, flush_timeout=30.0)
    try:
        for round_ in range(3):
            for span in sample_spans(first_id=10 * round_ + 1):
                tracer.export(span)
            started = time.monotonic()
            assert tracer.flush(30.0) is False
            assert time.monotonic() - started < 10
    finally:
        tracer.close()
    assert warnings == [
        f"orchestra: traces are not reaching {url} (connection refused); the run goes on, its spans are dropped "
        "(telemetry in docs/running.md)"
    ]


def test_a_collector_that_refuses_the_request_is_named_with_its_status() -> None:
    warnings: list[str] = []
    with OtlpReceiver(status=401) as receiver:
        tracer = _tracer(f"{receiver.url}/v1/traces", warnings, headers={"x-api-key": "wrong"})
        try:
            for span in sample_spans():
                tracer.export(span)
            assert tracer.flush(10.0) is False
        finally:
            tracer.close()
        assert receiver.requests and receiver.requests[0].headers["x-api-key"] == "wrong"
    assert len(warnings) == 1 and "(HTTP 401 Unauthorized)" in warnings[0]


def test_a_password_in_the_url_is_never_shown() -> None:
    warnings: list[str] = []
    tracer = _tracer(f"http://user:hunter2@127.0.0.1:{closed_port()}/v1/traces", warnings)
    try:
        tracer.export(sample_spans()[0])
        tracer.flush(5.0)
    finally:
        tracer.close()
    assert warnings and "hunter2" not in warnings[0] and "user:***@127.0.0.1" in warnings[0]


def test_the_queue_is_bounded_dropping_the_oldest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(otlp_tracer, "MAX_QUEUED", 3)
    warnings: list[str] = []
    with OtlpReceiver() as receiver:
        tracer = _tracer(f"{receiver.url}/v1/traces", warnings)
        try:
            spans = [span for n in range(3) for span in sample_spans(first_id=10 * n + 1)]
            for span in spans:  # faster than the sender, which waits a second for more spans before a batch
                tracer.export(span)
            assert tracer.flush(10.0) is False
            assert tracer.flush(10.0) is True  # what was lost is said once
        finally:
            tracer.close()
        received = [received.span.context for received in receiver.spans()]
    assert received == [span.context for span in spans[-3:]]
    assert len(warnings) == 1 and "more than 3 spans waited to be sent" in warnings[0]


def test_the_resource_names_orchestra_unless_told_otherwise(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OTEL_SERVICE_NAME", raising=False)
    monkeypatch.delenv("OTEL_RESOURCE_ATTRIBUTES", raising=False)
    with OtlpReceiver() as receiver:
        for name, env in ((None, None), (None, "from-env"), ("from-file", "from-env")):
            if env is not None:
                monkeypatch.setenv("OTEL_SERVICE_NAME", env)
            tracer = _tracer(f"{receiver.url}/v1/traces", [], service_name=name)
            tracer.export(sample_spans()[0])
            assert tracer.flush(10.0) is True
            tracer.close()
        resources = [received.resource for received in receiver.spans()]
    assert [resource["service.name"] for resource in resources] == ["orchestra", "from-env", "from-file"]
    assert all(isinstance(resource["service.version"], str) for resource in resources)
