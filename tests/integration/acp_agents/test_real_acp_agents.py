"""The real, pinned `gemini --acp` and `claude-code-acp` driven offline with the `acp` library's client side: a
session in a git repo with Orchestra's MCP server (`orchestra mcp serve`), scripted model replies from the fake
provider APIs (tests/support/fake_gemini_api.py, fake_provider_api.py) that call Orchestra's tools, and the agent's
updates, permission requests and file-system requests as a client sees them. What tests/cli_agents/README.md says
about these agents is checked here; the ACP backend's own tests run them under `orchestra run`
(tests/e2e/cli_agents/test_acp_agents.py)."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import acp
import pytest
from acp import schema

from tests.support.cli_agents import claude_code_acp_binary, claude_code_acp_env, gemini_binary, gemini_env
from tests.support.fake_gemini_api import FakeGeminiAPI
from tests.support.fake_provider_api import FakeAnthropicAPI, Reply, ToolUse
from tests.support.git_repos import GitRepo, git

ORCHESTRA = Path(sys.executable).with_name("orchestra")
TIMEOUT = 90


class RecordingClient:
    """An ACP client that records what the agent sends, allows each permission once, and serves the file-system
    methods in the project directory (a missing file is ACP's "Resource not found")."""

    def __init__(self) -> None:
        self.updates: list[dict[str, Any]] = []
        self.permissions: list[tuple[dict[str, Any], list[str]]] = []
        self.writes: list[tuple[str, str]] = []

    async def request_permission(
        self, options: list[schema.PermissionOption], session_id: str, tool_call: Any, **_: Any
    ) -> schema.RequestPermissionResponse:
        self.permissions.append((tool_call.model_dump(mode="json", by_alias=True), [o.kind for o in options]))
        once = next(option for option in options if option.kind == "allow_once")
        return schema.RequestPermissionResponse(
            outcome=schema.AllowedOutcome(outcome="selected", option_id=once.option_id)
        )

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.updates.append(update.model_dump(mode="json", by_alias=True, exclude_none=True))

    async def write_text_file(self, content: str, path: str, session_id: str, **_: Any) -> None:
        self.writes.append((path, content))
        Path(path).write_text(content)

    async def read_text_file(self, path: str, session_id: str, **_: Any) -> schema.ReadTextFileResponse:
        if not Path(path).is_file():
            raise acp.RequestError.resource_not_found(path)
        return schema.ReadTextFileResponse(content=Path(path).read_text())

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise acp.RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        pass

    def on_connect(self, conn: Any) -> None:
        pass

    def of_kind(self, kind: str) -> list[dict[str, Any]]:
        return [update for update in self.updates if update.get("sessionUpdate") == kind]

    def text(self) -> str:
        return "".join(update["content"].get("text", "") for update in self.of_kind("agent_message_chunk"))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    GitRepo(root).write("README.md", "hello\n")
    GitRepo(root).commit_all("initial")
    return root


@contextlib.asynccontextmanager
async def _session(
    command: list[str], env: dict[str, str], root: Path, client: RecordingClient
) -> AsyncIterator[tuple[Any, str, Any]]:
    """The agent started in its own process group, initialized with file-system support, a session opened in
    `root` with Orchestra's MCP server; on exit, the agent is stopped with SIGTERM, which must end it."""
    async with acp.spawn_agent_process(
        client, command[0], *command[1:], env=env, cwd=str(root), transport_kwargs={"stderr": asyncio.subprocess.DEVNULL}
    ) as (conn, process):
        fs = schema.FileSystemCapabilities(read_text_file=True, write_text_file=True)
        await asyncio.wait_for(
            conn.initialize(
                protocol_version=acp.PROTOCOL_VERSION, client_capabilities=schema.ClientCapabilities(fs=fs)
            ),
            TIMEOUT,
        )
        server = schema.McpServerStdio(
            name="orchestra", command=str(ORCHESTRA), args=["mcp", "serve", "--repo", f"project={root}"], env=[]
        )
        session = await asyncio.wait_for(conn.new_session(cwd=str(root), mcp_servers=[server]), TIMEOUT)
        try:
            yield conn, session.session_id, process
        finally:
            # neither agent exits when its stdin closes while a session is open: SIGTERM must end it
            if process.returncode is None:
                process.send_signal(signal.SIGTERM)
                await asyncio.wait_for(process.wait(), 10)


async def _prompt(conn: Any, session_id: str, text: str) -> Any:
    block = schema.TextContentBlock(type="text", text=text)
    return await asyncio.wait_for(conn.prompt(session_id=session_id, prompt=[block]), TIMEOUT)


def _children_of(pid: int) -> list[str]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return path.read_text().split() if path.exists() else []


WRITE = "project__write-file"
READ = "project__read-file"


def test_gemini_over_acp_calls_orchestras_mcp_tools_and_answers_each_prompt(project: Path, tmp_path: Path) -> None:
    script = [
        Reply("Writing a.py.", [ToolUse(f"mcp_orchestra_{WRITE}", {"path": "a.py", "content": "A = 1\n"})]),
        Reply("Reading it back.", [ToolUse(f"mcp_orchestra_{READ}", {"path": "a.py"})]),
        Reply("a.py is written."),
        Reply("Second prompt: b.py.", [ToolUse(f"mcp_orchestra_{WRITE}", {"path": "b.py", "content": "B = 2\n"})]),
        Reply("b.py too."),
    ]
    client = RecordingClient()
    env = gemini_env("", tmp_path / "home")

    async def run() -> tuple[Any, Any, FakeGeminiAPI, list[str]]:
        with FakeGeminiAPI(script) as api:
            env["GOOGLE_GEMINI_BASE_URL"] = api.base_url
            async with _session([str(gemini_binary()), "--acp"], env, project, client) as (conn, session_id, process):
                first = await _prompt(conn, session_id, "Write a.py")
                second = await _prompt(conn, session_id, "Now b.py")
                children = _children_of(process.pid)
            return first, second, api, children

    first, second, api, children = asyncio.run(run())
    # GEMINI_CLI_NO_RELAUNCH: no second node process (only the MCP server runs under the agent)
    assert len(children) == 1, children
    assert api.models == ["fake-model"] * 5  # GEMINI_MODEL: no "auto" routing request first
    assert not api.unknown_requests and not api.side_requests
    assert first.stop_reason == "end_turn" and second.stop_reason == "end_turn"
    assert (project / "a.py").read_text() == "A = 1\n" and (project / "b.py").read_text() == "B = 2\n"
    assert client.text() == "Writing a.py.Reading it back.a.py is written.Second prompt: b.py.b.py too."
    done = [update for update in client.of_kind("tool_call_update") if update.get("status") == "completed"]
    assert [update["toolCallId"].rsplit("__", 1)[0] for update in done] == [
        f"mcp_orchestra_{WRITE}", f"mcp_orchestra_{READ}", f"mcp_orchestra_{WRITE}"
    ]  # fmt: skip
    assert "A = 1" in str(done[1]["content"])
    # an MCP tool asks for permission every time when allowed once (no "always" rule was taken)
    assert [call["title"] for call, _ in client.permissions] == [
        f"{WRITE} (orchestra MCP Server)", f"{READ} (orchestra MCP Server)", f"{WRITE} (orchestra MCP Server)"
    ]  # fmt: skip
    assert "allow_once" in client.permissions[0][1]


def test_gemini_over_acp_writes_an_existing_file_through_the_clients_fs_methods(
    project: Path, tmp_path: Path
) -> None:
    script = [
        Reply("Rewriting the README.", [ToolUse("write_file", {"file_path": "README.md", "content": "bye\n"})]),
        Reply("Creating new.txt.", [ToolUse("write_file", {"file_path": "new.txt", "content": "new\n"})]),
        Reply("Done."),
    ]
    client = RecordingClient()
    env = gemini_env("", tmp_path / "home")

    async def run() -> list[dict[str, Any]]:
        with FakeGeminiAPI(script) as api:
            env["GOOGLE_GEMINI_BASE_URL"] = api.base_url
            async with _session([str(gemini_binary()), "--acp"], env, project, client) as (conn, session_id, _):
                await _prompt(conn, session_id, "Rewrite the README and add new.txt")
            return api.requests

    requests = asyncio.run(run())
    assert client.writes == [(str(project / "README.md"), "bye\n")]
    assert (project / "README.md").read_text() == "bye\n"
    # Gemini CLI 0.61.0 reads a file before writing it; its ACP client takes the "Resource not found" error for a
    # missing file as a failure (it tests `instanceof Error`, the JSON-RPC error is a plain object), so a new file
    # cannot be made through fs/write_text_file: the model gets the error (Orchestra's write-file tool can)
    assert not (project / "new.txt").exists()
    failed = [update for update in client.of_kind("tool_call_update") if update.get("status") == "failed"]
    assert len(failed) == 1 and "Resource not found" in str(failed[0]["content"])
    last = requests[2]["contents"][-1]["parts"][0]["functionResponse"]
    assert last["name"] == "write_file" and "Resource not found" in str(last["response"])


def test_claude_code_acp_calls_orchestras_mcp_tools_with_the_model_named_in_the_environment(
    project: Path, tmp_path: Path
) -> None:
    script = [
        Reply("Writing a.py.", [ToolUse(f"mcp__orchestra__{WRITE}", {"path": "a.py", "content": "A = 1\n"})]),
        Reply("Reading it back.", [ToolUse(f"mcp__orchestra__{READ}", {"path": "a.py"})]),
        # its own Write (served by the adapter's `acp` MCP server) is the client's fs/write_text_file, new file too
        Reply("Notes.", [ToolUse("mcp__acp__Write", {"file_path": str(project / "notes.txt"), "content": "n\n"})]),
        Reply("a.py is written."),
    ]
    client = RecordingClient()
    env = claude_code_acp_env("", tmp_path / "home", model="claude-test-model")

    async def run() -> FakeAnthropicAPI:
        with FakeAnthropicAPI(script) as api:
            env["ANTHROPIC_BASE_URL"] = api.base_url
            async with _session([str(claude_code_acp_binary())], env, project, client) as (conn, session_id, _):
                answer = await _prompt(conn, session_id, "Write a.py")
                assert answer.stop_reason == "end_turn"
            return api

    api = asyncio.run(run())
    assert api.remaining == 0 and not api.unknown_requests
    assert {request["model"] for request in api.requests} == {"claude-test-model"}
    offered = {tool["name"] for tool in api.requests[0]["tools"]}
    assert {f"mcp__orchestra__{WRITE}", f"mcp__orchestra__{READ}"} <= offered
    assert (project / "a.py").read_text() == "A = 1\n"
    assert client.text() == "Writing a.py.Reading it back.Notes.a.py is written."
    assert client.writes == [(str(project / "notes.txt"), "n\n")]
    done = [update for update in client.of_kind("tool_call_update") if update.get("status") == "completed"]
    assert [update["_meta"]["claudeCode"]["toolName"] for update in done] == [
        f"mcp__orchestra__{WRITE}", f"mcp__orchestra__{READ}", "mcp__acp__Write"
    ]  # fmt: skip
    assert [call["rawInput"] for call, _ in client.permissions] == [
        {"path": "a.py", "content": "A = 1\n"}, {"path": "a.py"}, {"file_path": str(project / "notes.txt"), "content": "n\n"}
    ]  # fmt: skip
    # allowed once, the adapter wrote no permission rule into the project (allow_always writes .claude/)
    assert not (project / ".claude").exists()
