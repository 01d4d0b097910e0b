"""OpenTelemetry traces of runs: where they go (`export_settings`, no OpenTelemetry import) and the OTLP/HTTP
tracer (`otlp_tracer`, the `otel` extra, imported only when tracing is on)."""
