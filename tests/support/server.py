"""Helpers for tests of `orchestra serve`: projects, pipelines, SSE parsing, waiting for a condition."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import requests

from tests.support.orchestra_project import ORCHESTRA

T = TypeVar("T")
# The base URL of test clients of a server without a token (it answers only loopback names).
LOCAL = "http://127.0.0.1"

TOOL_RUN = """digraph tool_run {
    start [shape=Mdiamond]; done [shape=Msquare]
    work [shape=parallelogram, tool_command="echo working"]
    start -> work -> done
}
"""
GATED = """digraph gated {
    start [shape=Mdiamond]; done [shape=Msquare]
    prepare [shape=parallelogram, tool_command="echo prepared"]
    review [shape=hexagon, label="Ship it?"]
    ship [shape=parallelogram, tool_command="echo shipped"]
    rework [shape=parallelogram, tool_command="echo reworked"]
    start -> prepare -> review
    review -> ship [label="[S] Ship"]
    review -> rework [label="[R] Rework"]
    ship -> done
    rework -> done
}
"""
STUCK = """digraph stuck {
    start [shape=Mdiamond]; done [shape=Msquare]
    wait [shape=parallelogram, tool_command="sleep 60"]
    after [shape=parallelogram, tool_command="echo after"]
    start -> wait -> after -> done
}
"""


def make_project(root: Path, backend: str = "simulate") -> Path:
    """A project directory with an orchestra.yaml that runs offline."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "orchestra.yaml").write_text(f"backend: {backend}\n", encoding="utf-8")
    return root


def wait_until(check: Callable[[], T | None], what: str, timeout: float = 60) -> T:
    """Poll `check` until it returns something truthy (a readiness wait, not a timing assertion)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def sse_messages(lines: Iterable[str]) -> Iterator[dict[str, Any]]:
    """Parse SSE lines into messages `{"id", "event", "data"}` (comments skipped; `data` decoded as JSON)."""
    message: dict[str, Any] = {}
    for line in lines:
        if line == "":
            if "data" in message:
                message["data"] = json.loads(message["data"])
                yield message
            message = {}
        elif line.startswith(":"):
            continue
        else:
            name, _, value = line.partition(":")
            message[name] = value[1:] if value.startswith(" ") else value


class LiveServer:
    """`orchestra serve` in a project, on a free loopback port; `headers` carry its token; `env` adds to (or
    overrides) the environment it runs in."""

    def __init__(self, project: Path, token: str | None = None, env: dict[str, str] | None = None) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = int(probe.getsockname()[1])
        self.url = f"http://127.0.0.1:{self.port}"
        self.headers = {"Authorization": f"Bearer {token}"} if token else {}
        env = {**os.environ, **(env or {}), "NO_COLOR": "1"}
        env.pop("ORCHESTRA_SERVER_TOKEN", None)
        if token:
            env["ORCHESTRA_SERVER_TOKEN"] = token
        self.process = subprocess.Popen(
            [str(ORCHESTRA), "serve", "--port", str(self.port)], cwd=project, env=env,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True,
        )
        wait_until(self._ready, "the server to answer")

    def _ready(self) -> bool:
        if self.process.poll() is not None:
            raise AssertionError(f"orchestra serve exited: {self.process.communicate()}")
        try:
            return requests.get(f"{self.url}/sessions", headers=self.headers, timeout=5).status_code in (200, 401)
        except requests.ConnectionError:
            return False

    def get(self, path: str, **kwargs: Any) -> requests.Response:
        return requests.get(self.url + path, headers={**self.headers, **kwargs.pop("headers", {})}, timeout=30, **kwargs)

    def post(self, path: str, body: dict[str, Any] | None = None) -> requests.Response:
        return requests.post(self.url + path, json=body or {}, headers=self.headers, timeout=30)

    def submit(self, dot: str, **body: Any) -> str:
        response = self.post("/pipelines", {"dot": dot, **body})
        assert response.status_code == 201, response.text
        return str(response.json()["id"])

    def status(self, session_id: str) -> dict[str, Any]:
        document: dict[str, Any] = self.get(f"/pipelines/{session_id}").json()
        return document

    def ended(self, session_id: str) -> dict[str, Any]:
        """The session's status once it is no longer running."""

        def check() -> dict[str, Any] | None:
            status = self.status(session_id)
            return status if status["status"] != "running" else None

        return wait_until(check, f"session {session_id} to end")

    def stop(self) -> str:
        """Stop the server (Ctrl-C, then kill); its stderr, which must hold no traceback."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGINT)
        try:
            _, stderr = self.process.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            _, stderr = self.process.communicate()
        assert "Traceback" not in stderr, stderr
        return str(stderr)
