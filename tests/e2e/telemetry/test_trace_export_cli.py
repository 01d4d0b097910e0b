"""Tracing as configured: `telemetry:` in orchestra.yaml (headers, service name), bad settings refused before a
session exists, a collector that is down or silent never failing or holding the run, and nothing of
OpenTelemetry imported when tracing is off."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.environment import hermetic_env
from tests.support.orchestra_project import orchestra, run_json, write_files
from tests.support.otlp_receiver import OtlpReceiver
from tests.support.traced_project import traced_project

ROOT = Path(__file__).resolve().parents[3]
PIPELINE = """digraph small {
  start [shape=Mdiamond]; exit [shape=Msquare]
  work [shape=parallelogram, tool_command="echo working"]
  start -> work -> exit
}
"""
LATE = "traces are not reaching"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    write_files(tmp_path / "project", {"small.dot": PIPELINE})
    return tmp_path / "project"


def _env(project: Path, **extra: str) -> dict[str, str]:
    return {**hermetic_env(project.parent / "home"), **extra}


def _config(project: Path, telemetry: str) -> None:
    (project / "orchestra.yaml").write_text("backend: simulate\n" + textwrap.dedent(telemetry), encoding="utf-8")


def _sessions(project: Path) -> list[object]:
    listed = orchestra("status", "--json", cwd=project, env=_env(project))
    return list(json.loads(listed.stdout)["sessions"]) if listed.returncode == 0 else []


def test_the_file_configures_the_endpoint_headers_and_service_name(project: Path) -> None:
    with OtlpReceiver() as receiver:
        _config(
            project,
            f"""\
            telemetry:
              otlp_endpoint: {receiver.url}/
              headers: {{x-team: night-shift}}
              headers_env: {{x-api-key: TRACE_KEY}}
              service_name: pipelines-ci
            """,
        )
        run_json("run", "small.dot", cwd=project, env=_env(project, TRACE_KEY="s3cret"))
        spans, requests = receiver.spans(), receiver.requests
    assert {request.path for request in requests} == {"/v1/traces"}
    assert {(r.headers["x-team"], r.headers["x-api-key"]) for r in requests} == {("night-shift", "s3cret")}
    assert {received.resource["service.name"] for received in spans} == {"pipelines-ci"}
    assert {received.name for received in spans} >= {"run small", "stage work"}


def test_the_variables_win_over_the_file(project: Path) -> None:
    with OtlpReceiver() as used, OtlpReceiver() as ignored:
        _config(project, f"telemetry: {{otlp_endpoint: {ignored.url}}}\n")
        env = _env(project, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=f"{used.url}/v1/traces", OTEL_SERVICE_NAME="from-env")
        run_json("run", "small.dot", cwd=project, env=env)
        assert ignored.spans() == []
        assert {received.resource["service.name"] for received in used.spans()} == {"from-env"}


def test_otel_sdk_disabled_turns_it_off(project: Path) -> None:
    with OtlpReceiver() as receiver:
        _config(project, f"telemetry: {{otlp_endpoint: {receiver.url}}}\n")
        run_json("run", "small.dot", cwd=project, env=_env(project, OTEL_SDK_DISABLED="true"))
        assert receiver.requests == []


@pytest.mark.parametrize(
    ("telemetry", "env", "expected"),
    [
        ("telemetry: {otlp_endpoint: 'ftp://collector:4318'}\n", {},
         "orchestra.yaml:2: telemetry.otlp_endpoint: expected an http(s) URL such as http://localhost:4318, "
         "got 'ftp://collector:4318'"),
        ("telemetry:\n  otlp_endpoint: http://127.0.0.1:9\n  headers_env: {x-api-key: NOT_SET_ANYWHERE}\n", {},
         "orchestra.yaml: telemetry.headers_env.x-api-key: the environment variable NOT_SET_ANYWHERE is not set"),
        ("", {"OTEL_EXPORTER_OTLP_ENDPOINT": "localhost:4318"},
         "environment variable OTEL_EXPORTER_OTLP_ENDPOINT: expected an http(s) URL such as "
         "http://localhost:4318, got 'localhost:4318'"),
    ],
    ids=["not-http", "header-variable-unset", "variable-not-a-url"],
)  # fmt: skip
def test_bad_telemetry_settings_stop_the_run_before_a_session_exists(
    project: Path, telemetry: str, env: dict[str, str], expected: str
) -> None:
    _config(project, telemetry)
    result = orchestra("run", "small.dot", cwd=project, env=_env(project, **env))
    assert result.returncode == 2, result.stderr
    assert expected in result.stderr
    assert len(result.stderr.strip().splitlines()) <= 2
    assert _sessions(project) == []


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def silent_collector() -> Iterator[str]:
    """A port that takes connections and never answers."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"


def test_a_collector_that_is_down_costs_one_warning_and_no_wait(project: Path) -> None:
    _config(project, "telemetry: {flush_timeout: 60s}\n")  # a held run would show as a minute
    env = _env(project, OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{_closed_port()}")
    started = time.monotonic()
    result = orchestra("run", "small.dot", cwd=project, env=env)
    took = time.monotonic() - started
    assert result.returncode == 0, result.stderr
    assert took < 30, took
    warned = [line for line in result.stderr.splitlines() if LATE in line]
    assert len(warned) == 1 and "connection refused" in warned[0] and "127.0.0.1" in warned[0], result.stderr
    assert "Traceback" not in result.stderr and "Transient error" not in result.stderr


def test_a_collector_that_never_answers_holds_the_run_at_most_its_flush_timeout(
    project: Path, silent_collector: str
) -> None:
    _config(project, "telemetry: {flush_timeout: 1s}\n")
    started = time.monotonic()
    result = orchestra("run", "small.dot", cwd=project, env=_env(project, OTEL_EXPORTER_OTLP_ENDPOINT=silent_collector))
    took = time.monotonic() - started
    assert result.returncode == 0, result.stderr
    assert took < 30, took
    assert len([line for line in result.stderr.splitlines() if LATE in line]) == 1, result.stderr


_PROBE = textwrap.dedent(
    """
    import sys
    from orchestra_cli.errors import run_guarded
    from orchestra_cli.app import app
    try:
        run_guarded(app, sys.argv[1:])
    except SystemExit:
        pass
    watched = ("opentelemetry", "google", "orchestra_adapters.telemetry")
    loaded = sorted(m for m in sys.modules if m.startswith(watched))
    print("LOADED", ",".join(loaded))
    """
)
OURS = "orchestra_adapters.telemetry.otlp_tracer"  # the only module of ours that imports OpenTelemetry
FANNED = """digraph fanned {
  start [shape=Mdiamond]; exit [shape=Msquare]
  fan [shape=component]
  a [shape=parallelogram, tool_command="echo a > a.txt"]
  b [shape=parallelogram, tool_command="echo b > b.txt"]
  join [shape=tripleoctagon]
  start -> fan; fan -> a -> join; fan -> b -> join; join -> exit
}
"""


def _loaded(project: Path, env: dict[str, str], *args: str) -> list[str]:
    """The OpenTelemetry (and protobuf) modules, and our telemetry modules, a whole `orchestra run` imported."""
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, "run", *args], cwd=project, capture_output=True, text=True,
        timeout=120, env={**env, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert "pipeline succeeded" in done.stdout + done.stderr, done.stdout + done.stderr
    [line] = [line for line in done.stdout.splitlines() if line.startswith("LOADED")]
    return [name for name in line.removeprefix("LOADED").strip().split(",") if name]


def test_with_tracing_off_a_run_imports_nothing_of_opentelemetry(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    project, _repo = traced_project(tmp_path)  # the fan-out pipeline beside it uses the same repo
    (project / "fanned.dot").write_text(FANNED, encoding="utf-8")
    env = hermetic_env(tmp_path / "home")
    loaded = _loaded(project, env, "fanned.dot", "--backend", "simulate")  # no LangChain on this path
    assert [name for name in loaded if name.startswith(("opentelemetry", "google"))] == [], loaded
    assert OURS not in loaded
    # With a LangGraph agent, langsmith (under langchain_core) imports opentelemetry's SDK itself when it is
    # installed; Orchestra's exporter, the OTLP encoding and protobuf stay out.
    loaded = _loaded(project, env, "traced.dot")
    assert not [name for name in loaded if name.startswith(("opentelemetry.exporter", "opentelemetry.proto", "google"))]
    assert OURS not in loaded
    with OtlpReceiver() as receiver:  # the probe sees them when tracing is on
        loaded = _loaded(project, {**env, "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url}, "fanned.dot", "--backend", "simulate")
    assert OURS in loaded and "opentelemetry.exporter.otlp.proto.http.trace_exporter" in loaded
