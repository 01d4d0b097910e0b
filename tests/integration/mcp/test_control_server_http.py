"""`orchestra mcp serve --control --http`: streamable HTTP on 127.0.0.1 with a bearer token. A request without the
token (or with another) is refused, so is one from another site's page; the `mcp` client with the token drives a
run to its end."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
import requests
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tests.integration.mcp.mcp_client import call
from tests.integration.mcp.test_control_server import GATED
from tests.support.orchestra_project import ORCHESTRA, run_json, write_files
from tests.support.server import make_project, wait_until

INITIALIZE = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}  # fmt: skip
# Succeeds only when the run's commands do not see the server's token.
PEEK = """digraph peek {
    start [shape=Mdiamond]; done [shape=Msquare]
    peek [shape=parallelogram, tool_command="test -z \\"$ORCHESTRA_MCP_CONTROL_TOKEN\\""]
    start -> peek -> done
}
"""
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


class HttpControl:
    """`orchestra mcp serve --control --http --port 0` in `project`; `url` once it listens, `token` its token."""

    def __init__(self, project: Path, log: Path, token: str | None) -> None:
        env = {key: value for key, value in os.environ.items() if key != "ORCHESTRA_MCP_CONTROL_TOKEN"}
        if token is not None:
            env["ORCHESTRA_MCP_CONTROL_TOKEN"] = token
        self.log = log
        self._errors = log.open("w", encoding="utf-8")
        self.process = subprocess.Popen(
            [str(ORCHESTRA), "mcp", "serve", "--control", "--http", "--port", "0"],
            cwd=project, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self._errors,
            text=True, start_new_session=True,
        )
        found = wait_until(self._listening, "the control server to listen")
        self.url = found.group(1)
        given = re.search(r"orchestra mcp: token (\S+)", log.read_text(encoding="utf-8"))
        self.token = token if token is not None else (given.group(1) if given else "")

    def _listening(self) -> re.Match[str] | None:
        if self.process.poll() is not None:
            raise AssertionError(f"the server exited: {self.log.read_text(encoding='utf-8')}")
        return re.search(r"listening on (http://127\.0\.0\.1:\d+/mcp)", self.log.read_text(encoding="utf-8"))

    def stop(self) -> str:
        """Stop it (Ctrl-C); its stderr, which must hold no traceback; its stdout must be empty."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGINT)
        stdout, _ = self.process.communicate(timeout=30)
        self._errors.close()
        log = self.log.read_text(encoding="utf-8")
        assert "Traceback" not in log and stdout == "", log
        return log


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = make_project(tmp_path / "project")
    write_files(root, {"gated.dot": GATED, "peek.dot": PEEK})
    return root


@pytest.fixture
def server(project: Path, tmp_path: Path) -> Iterator[HttpControl]:
    running = HttpControl(project, tmp_path / "server-stderr.txt", token="s3cret-token")
    try:
        yield running
    finally:
        running.stop()


def post(url: str, headers: dict[str, str]) -> requests.Response:
    return requests.post(url, json=INITIALIZE, headers={**MCP_HEADERS, **headers}, timeout=30)


def test_requests_without_the_token_or_from_another_site_are_refused(server: HttpControl) -> None:
    bearer = {"Authorization": f"Bearer {server.token}"}

    missing = post(server.url, {})
    wrong = post(server.url, {"Authorization": "Bearer not-the-token"})
    other_site = post(server.url, {**bearer, "Origin": "https://evil.example"})
    rebinding = post(server.url, {**bearer, "Host": "evil.example"})
    allowed = post(server.url, bearer)

    assert (missing.status_code, wrong.status_code) == (401, 401)
    assert missing.headers["WWW-Authenticate"] == "Bearer" and "bearer token" in missing.json()["error"]
    assert other_site.status_code == 403 and "another origin" in other_site.json()["error"]
    assert rebinding.status_code == 403 and "loopback" in rebinding.json()["error"]
    assert allowed.status_code == 200, allowed.text


def test_the_mcp_client_with_the_token_runs_a_gated_pipeline(server: HttpControl, project: Path) -> None:
    async def main() -> tuple[Any, Any]:
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {server.token}"})
        async with http, Client(streamable_http_client(server.url, http_client=http)) as client:
            text, error = await call(client, "start_run", pipeline="gated.dot")
            assert not error, text
            session = json.loads(text)["session_id"]
            with anyio.fail_after(60):
                while not json.loads((await call(client, "session_status", session_id=session))[0])["live"]["questions"]:
                    await anyio.sleep(0.05)
            await call(client, "answer_question", session_id=session, answer="S")
            with anyio.fail_after(60):
                while (live := json.loads((await call(client, "session_status", session_id=session))[0])["live"])[
                    "status"
                ] == "running":
                    await anyio.sleep(0.05)
            names = [tool.name for tool in (await client.list_tools()).tools]
            peek = json.loads((await call(client, "start_run", pipeline="peek.dot"))[0])["session_id"]
            with anyio.fail_after(60):
                while (ran := json.loads((await call(client, "session_status", session_id=peek))[0])["live"])[
                    "status"
                ] == "running":
                    await anyio.sleep(0.05)
            return session, (live, names, ran)

    session, (live, names, peeked) = anyio.run(main)

    assert live["status"] == "success"
    assert peeked["status"] == "success", peeked  # the token is not in the runs' environment
    assert "start_run" in names and not [name for name in names if "write" in name or "edit" in name]
    assert run_json("status", session, cwd=project)["status"] == "success"


def test_without_a_token_in_the_environment_it_makes_one_and_prints_it(project: Path, tmp_path: Path) -> None:
    running = HttpControl(project, tmp_path / "stderr.txt", token=None)
    try:
        assert len(running.token) >= 32
        assert post(running.url, {}).status_code == 401
        assert post(running.url, {"Authorization": f"Bearer {running.token}"}).status_code == 200
    finally:
        running.stop()


def test_http_needs_control_and_control_takes_no_worktree_options(project: Path) -> None:
    from tests.support.orchestra_project import orchestra

    http_alone = orchestra("mcp", "serve", "--http", cwd=project)
    with_session = orchestra("mcp", "serve", "--control", "--session", "1", cwd=project)

    assert http_alone.returncode == 2 and "--http serves run control: give it with --control" in http_alone.stderr
    assert with_session.returncode == 2 and "--control serves run control and takes no --session" in with_session.stderr


def test_a_port_in_use_is_one_line_and_exit_status_2(project: Path) -> None:
    import socket

    from tests.support.orchestra_project import orchestra

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = orchestra("mcp", "serve", "--control", "--http", "--port", str(port), cwd=project)

    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1].startswith(f"orchestra: error: cannot listen on 127.0.0.1:{port}: ")
