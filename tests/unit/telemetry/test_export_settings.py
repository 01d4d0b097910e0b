"""Where traces go: `telemetry:` in orchestra.yaml under the OTEL_* variables, every mistake named by its file,
line and key (or its variable) when orchestra.yaml loads or a run starts."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from orchestra_adapters.config.orchestra_yaml import load_settings, settings_from_dict
from orchestra_adapters.telemetry.export_settings import trace_export, traces_url
from orchestra_core.model.settings import ConfigError, OrchestraSettings, TelemetrySettings

SETTINGS = OrchestraSettings(telemetry=TelemetrySettings(otlp_endpoint="http://collector:4318"))


def _load(tmp_path: Path, text: str) -> OrchestraSettings:
    path = tmp_path / "orchestra.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return load_settings(path)


def test_no_endpoint_anywhere_means_no_tracing() -> None:
    assert trace_export(OrchestraSettings(), {}) is None


def test_the_file_gives_a_base_url_whose_traces_path_is_added_once() -> None:
    export = trace_export(SETTINGS, {})
    assert export is not None and export.url == "http://collector:4318/v1/traces"
    assert export.configured_by == "telemetry.otlp_endpoint" and export.flush_timeout == 5.0
    assert traces_url("https://otel.example/base/") == "https://otel.example/base/v1/traces"
    assert traces_url("http://c:4318/v1/traces") == "http://c:4318/v1/traces"


def test_the_variables_win_the_traces_one_first_and_used_as_it_is() -> None:
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://base:4318", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://t:1/x"}
    export = trace_export(SETTINGS, env)
    assert export is not None and (export.url, export.configured_by) == ("http://t:1/x", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    export = trace_export(SETTINGS, {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://base:4318/"})
    assert export is not None and export.url == "http://base:4318/v1/traces"


@pytest.mark.parametrize(
    "env", [{"OTEL_SDK_DISABLED": "TRUE"}, {"OTEL_TRACES_EXPORTER": "none"}, {"OTEL_TRACES_EXPORTER": "otlp, none"}]
)
def test_the_standard_switches_turn_it_off(env: dict[str, str]) -> None:
    assert trace_export(SETTINGS, {**env, "OTEL_EXPORTER_OTLP_ENDPOINT": "http://base:4318"}) is None


def test_headers_from_the_file_and_from_the_environment(tmp_path: Path) -> None:
    settings = _load(
        tmp_path,
        """\
        telemetry:
          otlp_endpoint: https://api.honeycomb.io
          headers: {x-honeycomb-dataset: pipelines}
          headers_env: {x-honeycomb-team: HONEYCOMB_API_KEY}
          service_name: nightly
          flush_timeout: 2s
        """,
    )
    export = trace_export(settings, {"HONEYCOMB_API_KEY": "key-123"})
    assert export is not None
    assert dict(export.headers) == {"x-honeycomb-dataset": "pipelines", "x-honeycomb-team": "key-123"}
    assert (export.service_name, export.flush_timeout) == ("nightly", 2.0)
    assert "key-123" not in repr(export) and "key-123" not in repr(settings)
    with pytest.raises(ConfigError) as raised:
        trace_export(settings, {})
    assert str(raised.value) == (
        f"{tmp_path / 'orchestra.yaml'}: telemetry.headers_env.x-honeycomb-team: the environment variable "
        "HONEYCOMB_API_KEY is not set (it holds this header's value)"
    )


@pytest.mark.parametrize(
    ("value", "shown"),
    [("localhost:4318", "localhost:4318"), ("grpc://c:4317", "grpc://c:4317"), ("http://", "http://"),
     ("http://c:99999", "http://c:99999"), ("http://u:secret@c:4318 x", "http://u:***@c:4318 x")],
)  # fmt: skip
def test_a_variable_that_is_not_an_http_url_is_named(value: str, shown: str) -> None:
    with pytest.raises(ConfigError) as raised:
        trace_export(OrchestraSettings(), {"OTEL_EXPORTER_OTLP_ENDPOINT": value})
    assert str(raised.value) == (
        "environment variable OTEL_EXPORTER_OTLP_ENDPOINT: expected an http(s) URL such as http://localhost:4318, "
        f"got {shown!r}"
    )


def test_every_mistake_of_the_section_is_named_with_its_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as raised:
        _load(
            tmp_path,
            """\
            telemetry:
              otlp_endpoint: ftp://collector
              headers: {"bad header": x, ok: "two\\nlines"}
              headers_env: {x-key: 1NOPE, ok: OK_VAR}
              service_name: " "
            """,
        )
    file = tmp_path / "orchestra.yaml"
    assert str(raised.value).splitlines() == [
        f"{file}:2: telemetry.otlp_endpoint: expected an http(s) URL such as http://localhost:4318, got 'ftp://collector'",
        f"{file}:3: telemetry.headers.bad header: not a valid HTTP header name",
        f"{file}:3: telemetry.headers.ok: a header value is one line of text",
        f"{file}:4: telemetry.headers_env.x-key: '1NOPE' is not an environment variable name",
        f"{file}:4: telemetry.headers_env.ok: also set in telemetry.headers; give it in one of them",
        f"{file}:5: telemetry.service_name: must not be empty",
    ]


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({"otlp_endpoint": 4318}, "telemetry.otlp_endpoint: expected a string, got a number (4318)"),
        ({"flush_timeout": 0}, "telemetry.flush_timeout: expected a positive duration, got 0"),
        ({"endpoint": "http://c"}, "telemetry.endpoint: unknown key (did you mean otlp_endpoint?)"),
        ({"headers": ["x"]}, "telemetry.headers: expected a mapping, got a list"),
    ],
)
def test_the_sections_types_are_strict(tmp_path: Path, section: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=None) as raised:
        settings_from_dict({"telemetry": section}, project_root=tmp_path)
    assert message in str(raised.value)
