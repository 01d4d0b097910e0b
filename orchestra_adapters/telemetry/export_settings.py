"""Where a process's traces go: orchestra.yaml's `telemetry:` under the standard OTEL_* variables, checked.

Nothing here imports OpenTelemetry: deciding that tracing is off costs a few dictionary lookups.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from urllib.parse import urlsplit

from attrs import field, frozen

from orchestra_core.model.immutable import frozen_map
from orchestra_core.model.remote_urls import redact_url
from orchestra_core.model.settings import ConfigError, ConfigProblem, OrchestraSettings, TelemetrySettings

TRACES_ENDPOINT_ENV = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
ENDPOINT_ENV = "OTEL_EXPORTER_OTLP_ENDPOINT"
TRACES_PATH = "v1/traces"
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")  # an HTTP token (RFC 9110)
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@frozen
class TraceExport:
    """A process's trace destination.

    Attributes:
        url: The OTLP/HTTP traces URL spans are posted to.
        headers: Headers of every request (the file's, `headers_env` resolved; OTEL_EXPORTER_OTLP_HEADERS is
            added by the exporter itself).
        service_name: The resource's `service.name` from the file (None: OTEL_SERVICE_NAME, else `orchestra`).
        flush_timeout: How long the end of a run waits at most for its spans to be sent.
        configured_by: What chose the destination, for messages (`telemetry.otlp_endpoint`, a variable's name).
    """

    url: str
    headers: Mapping[str, str] = field(factory=dict, converter=frozen_map, repr=False)
    service_name: str | None = None
    flush_timeout: float = 5.0
    configured_by: str = ""

    @property
    def shown_url(self) -> str:
        """The URL as messages show it (without a password)."""
        return redact_url(self.url)


def trace_export(settings: OrchestraSettings, environ: Mapping[str, str]) -> TraceExport | None:
    """The destination of this process's traces, or None when tracing is off.

    On when `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (the traces URL, used as it is), `OTEL_EXPORTER_OTLP_ENDPOINT`
    (a base URL) or `telemetry.otlp_endpoint` (a base URL) is set, in that order; off anyway with
    `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`.

    Raises:
        ConfigError: A variable's URL is not http(s), or a `telemetry.headers_env` variable is not set; the
            message names the variable, or the file and key.
    """
    if _disabled(environ):
        return None
    telemetry = settings.telemetry
    chosen = _chosen_endpoint(telemetry, environ)
    if chosen is None:
        return None
    url, configured_by = chosen
    headers = {**telemetry.headers, **_headers_from_env(telemetry, environ, settings)}
    return TraceExport(url, headers, telemetry.service_name, float(telemetry.flush_timeout), configured_by)


def _disabled(environ: Mapping[str, str]) -> bool:
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return True
    exporters = {name.strip().lower() for name in environ.get("OTEL_TRACES_EXPORTER", "").split(",")}
    return "none" in exporters


def _chosen_endpoint(telemetry: TelemetrySettings, environ: Mapping[str, str]) -> tuple[str, str] | None:
    """(traces URL, what set it), the variables before the file (which was checked when it was read).

    Raises:
        ConfigError: A variable's value is not an http(s) URL.
    """
    for variable in (TRACES_ENDPOINT_ENV, ENDPOINT_ENV):
        value = environ.get(variable, "").strip()
        if not value:
            continue
        problem = endpoint_problem(value)
        if problem is not None:
            raise ConfigError.at(problem, key=f"environment variable {variable}")
        return (value if variable == TRACES_ENDPOINT_ENV else traces_url(value)), variable
    if telemetry.otlp_endpoint:
        return traces_url(telemetry.otlp_endpoint.strip()), "telemetry.otlp_endpoint"
    return None


def traces_url(base: str) -> str:
    """A base URL's traces URL: `/v1/traces` added, unless the path already ends with it."""
    trimmed = base.rstrip("/")
    return trimmed if trimmed.endswith("/" + TRACES_PATH) else f"{trimmed}/{TRACES_PATH}"


def _headers_from_env(
    telemetry: TelemetrySettings, environ: Mapping[str, str], settings: OrchestraSettings
) -> dict[str, str]:
    headers = {}
    for name, variable in telemetry.headers_env.items():
        value = environ.get(variable, "").strip()
        if not value:
            raise ConfigError(
                ConfigProblem(
                    f"the environment variable {variable} is not set (it holds this header's value)",
                    str(settings.source_path) if settings.source_path else None,
                    key=f"telemetry.headers_env.{name}",
                )
            )
        headers[name] = value
    return headers


def endpoint_problem(url: str) -> str | None:
    """What is wrong with an OTLP/HTTP endpoint URL (None: nothing)."""
    expected = "expected an http(s) URL such as http://localhost:4318"
    if not url or any(char.isspace() or not char.isprintable() for char in url):
        return f"{expected}, got {redact_url(url)!r}"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number in range
    except ValueError:
        return f"{expected}, got {redact_url(url)!r}"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"{expected}, got {redact_url(url)!r}"
    return None


def telemetry_problems(telemetry: TelemetrySettings) -> Iterator[tuple[tuple[str, ...], str]]:
    """Every mistake of a `telemetry:` section: (key path under `telemetry`, what is wrong)."""
    if telemetry.otlp_endpoint is not None:
        problem = endpoint_problem(telemetry.otlp_endpoint.strip())
        if problem is not None:
            yield ("otlp_endpoint",), problem
    for name, value in telemetry.headers.items():
        if not _HEADER_NAME.match(name):
            yield ("headers", name), "not a valid HTTP header name"
        if any(char in value for char in "\r\n\0"):
            yield ("headers", name), "a header value is one line of text"
    for name, variable in telemetry.headers_env.items():
        if not _HEADER_NAME.match(name):
            yield ("headers_env", name), "not a valid HTTP header name"
        if not _ENV_NAME.match(variable):
            yield ("headers_env", name), f"{variable!r} is not an environment variable name"
        if name.lower() in {header.lower() for header in telemetry.headers}:
            yield ("headers_env", name), "also set in telemetry.headers; give it in one of them"
    if telemetry.service_name is not None and not telemetry.service_name.strip():
        yield ("service_name",), "must not be empty"
