"""A ToolHost in this process and its stdio proxy as a real subprocess, driven by the `mcp` client over stdio:
the tools an agent sees, writes reaching this process's WriteTracker, refused paths, tokens, a vanished host."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from orchestra_adapters.mcp.tool_host import ToolHost
from orchestra_adapters.process.command_runner import SubprocessCommandRunner
from orchestra_adapters.tools.toolbox import Toolbox
from orchestra_core.agents.repo_context import RepoContext
from orchestra_core.agents.tools import WriteTracker
from orchestra_core.agents.toolset import build_tools, create_registry
from orchestra_core.model.outcome import StageStatus
from orchestra_core.model.settings import OrchestraSettings, ToolCommandSettings, WorkspaceSettings
from tests.integration.mcp.mcp_client import call, list_names, server_params, with_client
from tests.support.git_repos import GitRepo, make_repo
from tests.support.orchestra_project import ORCHESTRA

TOOLS = [
    "project__read-file",
    "project__write-file",
    "project__edit-file",
    "project__search-code",
    "project__list-files",
    "project__greet",
    "report_outcome",
]


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    repo = make_repo(tmp_path / "project", {"README.md": "# Project\n", "src/app.py": "def main():\n    return 1\n"})
    (repo.path / "gl").symlink_to(".git")
    (repo.path / "out").symlink_to("/etc")
    (repo.path / "up").symlink_to("..")
    repo.commit_all("symlinks")
    (tmp_path / "outside.txt").write_text("secret\n", encoding="utf-8")
    return repo


@pytest.fixture
def tracker() -> WriteTracker:
    return WriteTracker()


@pytest.fixture
def host(repo: GitRepo, tracker: WriteTracker) -> Iterator[ToolHost]:
    settings = OrchestraSettings(
        workspace=WorkspaceSettings(tools={"project": {"greet": ToolCommandSettings(command="printf 'hi from greet'")}})
    )
    registry = create_registry(settings, SubprocessCommandRunner())
    repos = {"project": RepoContext("project", repo.path)}
    tools = build_tools(registry, registry.names(["project"]), repos, tracker)
    with ToolHost(Toolbox(tools)) as host:
        yield host


def proxy(host: ToolHost, *, token: str | None = None, cwd: Path | None = None) -> object:
    spec = host.server_spec()
    env = dict(spec.env) if token is None else {"ORCHESTRA_MCP_TOKEN": token}
    return server_params(spec.command, spec.args, env=env, cwd=cwd)


def test_lists_the_repo_tools_under_provider_safe_names(host: ToolHost) -> None:
    async def body(client: Client) -> None:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert list(tools) == TOOLS
        assert tools["project__write-file"].input_schema["required"] == ["path", "content"]
        assert tools["project__read-file"].description
        assert "finish with a short summary" in (tools["report_outcome"].description or "")

    with_client(proxy(host), body)


def test_a_write_lands_in_the_file_and_in_the_hosts_write_tracker(
    host: ToolHost, repo: GitRepo, tracker: WriteTracker
) -> None:
    async def body(client: Client) -> list[tuple[str, bool]]:
        return [
            await call(client, "project__write-file", path="notes/todo.md", content="- one\n"),
            await call(client, "project__edit-file", path="src/app.py", old_text="return 1", new_text="return 2"),
        ]

    results = with_client(proxy(host), body)

    assert results == [("Wrote 6 bytes to notes/todo.md", False), ("Replaced 1 occurrence(s) in src/app.py", False)]
    assert (repo.path / "notes" / "todo.md").read_text(encoding="utf-8") == "- one\n"
    assert "return 2" in (repo.path / "src" / "app.py").read_text(encoding="utf-8")
    assert tracker.flush() == ["project:notes/todo.md", "project:src/app.py"]
    assert [executed.record.name for executed in host.calls()] == ["project:write-file", "project:edit-file"]


def test_reads_resolve_relative_to_the_repo(host: ToolHost) -> None:
    async def body(client: Client) -> list[tuple[str, bool]]:
        return [
            await call(client, "project__read-file", path="README.md"),
            await call(client, "project__read-file", path="src/app.py", start_line=2, end_line=2),
            await call(client, "project__list-files", pattern="*.py"),
            await call(client, "project__search-code", pattern="def main"),
            await call(client, "project__greet"),
        ]

    read, line, listed, found, greet = with_client(proxy(host), body)

    assert read == ("# Project\n", False)
    assert "return 1" in line[0] and not line[1]
    assert listed == ("src/app.py", False)
    assert found == ("src/app.py:1: def main():", False)
    assert "exit code 0" in greet[0] and greet[0].endswith("hi from greet") and not greet[1]


ESCAPES = [
    ("project__read-file", {"path": "../outside.txt"}, ".."),
    ("project__read-file", {"path": "/etc/passwd"}, "absolute"),
    ("project__read-file", {"path": ".git/config"}, ".git"),
    ("project__read-file", {"path": ".GIT/config"}, ".git"),
    ("project__read-file", {"path": "gl/config"}, ".git"),
    ("project__read-file", {"path": "out/passwd"}, "leaves the project repo"),
    ("project__read-file", {"path": "up/outside.txt"}, "leaves the project repo"),
    ("project__list-files", {"path": "out"}, "leaves the project repo"),
    ("project__search-code", {"pattern": "root", "path": "gl"}, ".git"),
    ("project__write-file", {"path": "../escape.txt", "content": "x"}, ".."),
    ("project__write-file", {"path": "gl/hooks/pre-commit", "content": "#!/bin/sh\n"}, ".git"),
    ("project__write-file", {"path": "out/orchestra-escape", "content": "x"}, "leaves the project repo"),
    ("project__write-file", {"path": "up/escape.txt", "content": "x"}, "leaves the project repo"),
    ("project__edit-file", {"path": ".git/config", "old_text": "[core]", "new_text": "[x]"}, ".git"),
]


def test_path_escapes_are_error_results_and_the_server_keeps_serving(
    host: ToolHost, repo: GitRepo, tracker: WriteTracker
) -> None:
    config_before = (repo.path / ".git" / "config").read_text(encoding="utf-8")

    async def body(client: Client) -> tuple[list[tuple[str, bool]], tuple[str, bool]]:
        refused = [await call(client, name, **arguments) for name, arguments, _ in ESCAPES]
        return refused, await call(client, "project__read-file", path="README.md")

    refused, after = with_client(proxy(host), body)

    for (name, arguments, reason), (text, is_error) in zip(ESCAPES, refused, strict=True):
        assert is_error, f"{name} {arguments} was not refused: {text}"
        assert text.startswith("Error: ") and reason in text.lower(), (name, arguments, text)
    assert after == ("# Project\n", False)
    assert not (repo.path.parent / "escape.txt").exists()
    assert not (repo.path / ".git" / "hooks" / "pre-commit").exists()
    assert (repo.path / ".git" / "config").read_text(encoding="utf-8") == config_before
    assert tracker.flush() == []


def test_bad_arguments_and_unknown_tools_are_error_results(host: ToolHost) -> None:
    async def body(client: Client) -> list[tuple[str, bool]]:
        return [
            await call(client, "project__read-file", path=3),
            await call(client, "project__read-file"),
            await call(client, "project__read-file", path="README.md", colour="red"),
            await call(client, "project__delete-everything", path="."),
            await call(client, "project__read-file", path="missing.txt"),
        ]

    results = with_client(proxy(host), body)

    assert all(is_error for _, is_error in results), results
    assert "'path' must be a string" in results[0][0]
    assert "missing required argument(s): path" in results[1][0]
    assert "unknown argument(s): colour" in results[2][0]
    assert "unknown tool 'project__delete-everything'" in results[3][0]
    assert "missing.txt" in results[4][0]


def test_report_outcome_is_recorded_and_asks_the_agent_to_finish(host: ToolHost) -> None:
    async def body(client: Client) -> list[tuple[str, bool]]:
        return [
            await call(client, "report_outcome", status="bogus"),
            await call(client, "report_outcome", status="fail", notes="tests do not pass"),
        ]

    bad, good = with_client(proxy(host), body)

    assert bad[1] and "'bogus' is not a valid" in bad[0]
    assert good == ("Outcome recorded: fail. Now finish: end your reply with a short summary of what you did.", False)
    assert host.reported_outcome is not None
    assert host.reported_outcome.status is StageStatus.FAIL
    assert host.reported_outcome.failure_reason == "tests do not pass"


def test_a_wrong_token_is_refused(host: ToolHost, repo: GitRepo) -> None:
    async def body(client: Client) -> tuple[str, tuple[str, bool]]:
        with pytest.raises(MCPError) as listing:
            await client.list_tools()
        written = await call(client, "project__write-file", path="pwned.txt", content="x")
        return str(listing.value), written

    listing, written = with_client(proxy(host, token="not-the-token"), body)

    assert "Orchestra's tool host is gone" in listing
    assert written[1] and "Orchestra's tool host is gone" in written[0]
    assert not (repo.path / "pwned.txt").exists()
    assert host.calls() == []


def test_when_the_host_is_gone_calls_are_error_results_and_the_proxy_stays_up(
    repo: GitRepo, tracker: WriteTracker
) -> None:
    registry = create_registry(OrchestraSettings())
    tools = build_tools(registry, registry.names(["project"]), {"project": RepoContext("project", repo.path)}, tracker)
    host = ToolHost(Toolbox(tools)).__enter__()
    address = Path(host.address)

    async def body(client: Client) -> list[object]:
        first = await call(client, "project__read-file", path="README.md")
        host.__exit__(None, None, None)
        return [first, await call(client, "project__read-file", path="README.md"),
                await call(client, "project__write-file", path="late.txt", content="x"), await list_names(client)]

    try:
        first, gone, still_gone, names = with_client(proxy(host), body)
    finally:
        host.__exit__(None, None, None)

    assert first == ("# Project\n", False)
    assert gone[1] and gone[0].startswith("Error: Orchestra's tool host is gone")
    assert still_gone[1] and "Orchestra's tool host is gone" in still_gone[0]
    assert "project__read-file" in names  # listed before the host went; the proxy still answers
    assert not address.parent.exists()  # the private socket directory is removed
    assert not (repo.path / "late.txt").exists()


def test_concurrent_calls_from_the_agent_all_get_their_results(host: ToolHost, tracker: WriteTracker) -> None:
    async def body(client: Client) -> dict[int, tuple[str, bool]]:
        results: dict[int, tuple[str, bool]] = {}

        async def write(number: int) -> None:
            results[number] = await call(client, "project__write-file", path=f"many/{number}.txt", content="x" * number)

        async with anyio.create_task_group() as group:
            for number in range(1, 9):
                group.start_soon(write, number)
        return results

    results = with_client(proxy(host), body)

    assert results == {number: (f"Wrote {number} bytes to many/{number}.txt", False) for number in range(1, 9)}
    assert sorted(tracker.flush()) == sorted(f"project:many/{number}.txt" for number in range(1, 9))


def test_the_proxy_imports_only_mcp_and_the_standard_library(host: ToolHost, tmp_path: Path) -> None:
    spec = host.server_spec()
    process = subprocess.run(
        [spec.command, "-X", "importtime", *spec.args],
        env={**server_params(spec.command, spec.args).env, **spec.env},  # type: ignore[dict-item]
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )

    assert process.returncode == 0, process.stderr
    assert process.stdout == ""
    imported = {line.split("|")[-1].strip() for line in process.stderr.splitlines() if line.startswith("import time:")}
    assert "mcp.server.lowlevel" in imported
    heavy = {"langchain_core", "langgraph", "typer", "attrs", "orchestra_core", "orchestra_cli", "cattrs", "rich"}
    assert heavy.isdisjoint(imported), heavy & imported


def test_a_package_in_the_agents_working_directory_does_not_shadow_the_proxy(
    host: ToolHost, tmp_path: Path
) -> None:
    worktree = tmp_path / "worktree"
    planted = worktree / "orchestra_adapters"
    planted.mkdir(parents=True)
    marker = tmp_path / "planted-code-ran"
    (planted / "__init__.py").write_text(f"open({str(marker)!r}, 'w').close()\n", encoding="utf-8")

    async def body(client: Client) -> tuple[str, bool]:
        return await call(client, "project__read-file", path="README.md")

    assert with_client(proxy(host, cwd=worktree), body) == ("# Project\n", False)
    assert not marker.exists()


def test_orchestra_mcp_serve_connect_is_the_same_proxy(host: ToolHost, tracker: WriteTracker) -> None:
    async def body(client: Client) -> tuple[str, bool]:
        return await call(client, "project__write-file", path="via-cli.txt", content="x")

    params = server_params(str(ORCHESTRA), ["mcp", "serve", "--connect", host.address], env=dict(host.server_spec().env))

    assert with_client(params, body) == ("Wrote 1 bytes to via-cli.txt", False)
    assert tracker.flush() == ["project:via-cli.txt"]
