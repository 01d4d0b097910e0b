"""The Tracer contract run against the in-memory tracer and the OTLP/HTTP tracer (a receiver on loopback that
decodes what it gets; a port nothing listens on, and a receiver that refuses, for the unreachable case)."""

from __future__ import annotations

import socket

from orchestra_adapters.telemetry.export_settings import TraceExport
from orchestra_adapters.telemetry.otlp_tracer import OtlpTracer
from orchestra_core.model.spans import Span
from orchestra_core.ports.tracer import Tracer
from orchestra_core.testing.contracts.tracer import TracerContract
from orchestra_core.testing.tracer import InMemoryTracer
from tests.support.otlp_receiver import OtlpReceiver


class TestInMemoryTracer(TracerContract):
    def make_tracer(self) -> InMemoryTracer:
        return InMemoryTracer()

    def received(self, tracer: Tracer) -> list[Span]:
        assert isinstance(tracer, InMemoryTracer)
        return tracer.spans


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class TestOtlpTracer(TracerContract):
    capabilities = frozenset({"unreachable"})

    def make_tracer(self) -> OtlpTracer:
        self.receiver = OtlpReceiver().__enter__()
        self.add_cleanup(lambda: self.receiver.__exit__(None, None, None))
        return OtlpTracer(TraceExport(f"{self.receiver.url}/v1/traces"), warn=self.warnings.append)

    def received(self, tracer: Tracer) -> list[Span]:
        return [received.span for received in self.receiver.spans()]

    def make_unreachable_tracer(self) -> OtlpTracer:
        return OtlpTracer(TraceExport(f"http://127.0.0.1:{closed_port()}/v1/traces"), warn=self.warnings.append)

    def setup_method(self, method: object = None) -> None:
        super().setup_method(method)
        self.warnings: list[str] = []
