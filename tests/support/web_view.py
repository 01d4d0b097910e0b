"""Helpers for the web view's browser tests: finding chromium, a live `orchestra serve` on loopback."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
from pathlib import Path
from typing import Any

import requests

from tests.support.orchestra_project import ORCHESTRA
from tests.support.server import make_project, wait_until

CHROMIUM_PATHS = ("/usr/bin/chromium", "/usr/bin/chromium-browser")


def chromium_path() -> str | None:
    """Debian's chromium, or another found on PATH."""
    for candidate in CHROMIUM_PATHS:
        if os.access(candidate, os.X_OK):
            return candidate
    return shutil.which("chromium") or shutil.which("chromium-browser")


class LiveServer:
    """`orchestra serve` in a project, on a free loopback port; `headers` carry its token."""

    def __init__(self, project: Path, token: str | None = None) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = int(probe.getsockname()[1])
        self.url = f"http://127.0.0.1:{port}"
        self.headers = {"Authorization": f"Bearer {token}"} if token else {}
        env = {**os.environ, "NO_COLOR": "1"}
        env.pop("ORCHESTRA_SERVER_TOKEN", None)
        if token:
            env["ORCHESTRA_SERVER_TOKEN"] = token
        self.process = subprocess.Popen(
            [str(ORCHESTRA), "serve", "--port", str(port)], cwd=project, env=env,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True,
        )
        wait_until(self._ready, "the server to answer")

    def _ready(self) -> bool:
        if self.process.poll() is not None:
            raise AssertionError(f"orchestra serve exited: {self.process.communicate()}")
        try:
            return requests.get(f"{self.url}/sessions", headers=self.headers, timeout=5).status_code == 200
        except requests.ConnectionError:
            return False

    def submit(self, dot: str) -> str:
        response = requests.post(f"{self.url}/pipelines", json={"dot": dot}, headers=self.headers, timeout=30)
        assert response.status_code == 201, response.text
        return str(response.json()["id"])

    def status(self, session_id: str) -> dict[str, Any]:
        document: dict[str, Any] = requests.get(
            f"{self.url}/pipelines/{session_id}", headers=self.headers, timeout=30
        ).json()
        return document

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGINT)
        try:
            _, stderr = self.process.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            _, stderr = self.process.communicate()
        assert "Traceback" not in stderr, stderr


def live_server(tmp_path: Path, token: str | None = None) -> LiveServer:
    return LiveServer(make_project(tmp_path / "project"), token=token)
