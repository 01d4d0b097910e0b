"""`orchestra mcp serve` run by hand, as Claude Desktop or an IDE would start it: a real subprocess spoken
to over stdio with the `mcp` client; bad options end with one line and exit status 2."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from tests.integration.mcp.mcp_client import call, list_names, orchestra_mcp_serve, with_client
from tests.support.git_repos import make_repo
from tests.support.orchestra_project import EXAMPLES, orchestra, run_json, write_files

BUILTINS = ["read-file", "write-file", "edit-file", "search-code", "list-files"]


def test_serves_an_explicit_directory_for_reading_and_writing(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "work", {"README.md": "# Work\n", "src/app.py": "VALUE = 1\n"})
    (repo.path / "gl").symlink_to(".git")
    head = repo.head()
    stderr = tmp_path / "stderr.txt"

    async def body(client: Client) -> list[object]:
        return [
            await list_names(client),
            await call(client, "project__read-file", path="src/app.py"),
            await call(client, "project__write-file", path="notes/todo.md", content="- ship it\n"),
            await call(client, "project__edit-file", path="src/app.py", old_text="1", new_text="2"),
            await call(client, "project__read-file", path="../work/README.md"),
            await call(client, "project__write-file", path="gl/hooks/post-checkout", content="#!/bin/sh\n"),
            await call(client, "project__read-file", path="notes/todo.md"),
        ]

    names, read, wrote, edited, escaped, into_git, reread = with_client(
        orchestra_mcp_serve("--repo", f"project={repo.path}", cwd=tmp_path), body, stderr=stderr
    )

    assert names == [f"project__{tool}" for tool in BUILTINS]  # no pipeline stage: no report_outcome
    assert read == ("VALUE = 1\n", False)
    assert wrote == ("Wrote 10 bytes to notes/todo.md", False)
    assert edited == ("Replaced 1 occurrence(s) in src/app.py", False)
    assert escaped[1] and "'..'" in escaped[0]
    assert into_git[1] and ".git" in into_git[0]
    assert reread == ("- ship it\n", False)
    assert (repo.path / "src" / "app.py").read_text(encoding="utf-8") == "VALUE = 2\n"
    assert not (repo.path / ".git" / "hooks" / "post-checkout").exists()
    assert repo.head() == head  # nothing committed: it is the user's checkout
    log = stderr.read_text(encoding="utf-8")
    assert "orchestra mcp: serving 5 tools over stdio; repos: project=" in log
    assert "project:write-file wrote project:notes/todo.md (not committed)" in log
    assert "project:edit-file wrote project:src/app.py (not committed)" in log
    assert "Traceback" not in log


def test_serves_the_configured_repos_checkouts_and_workspace_commands(tmp_path: Path) -> None:
    project = tmp_path / "project"
    backend = make_repo(project / "backend", {"api.py": "def handler():\n    return 'ok'\n"})
    write_files(
        project,
        {
            "orchestra.yaml": "workspace:\n  repos:\n    backend:\n      path: backend\n"
            "  tools:\n    backend:\n      count-lines:\n        command: wc -l < api.py\n",
        },
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    async def body(client: Client) -> list[object]:
        return [
            await list_names(client),
            await call(client, "backend__search-code", pattern="return"),
            await call(client, "backend__count-lines"),
        ]

    names, found, counted = with_client(orchestra_mcp_serve("--project", project, cwd=elsewhere), body)

    assert names == [*(f"backend__{tool}" for tool in BUILTINS), "backend__count-lines"]
    assert found == ("api.py:2:     return 'ok'", False)
    assert not counted[1] and counted[0].rstrip().endswith("2")
    assert backend.status() == ""


def test_without_repos_it_serves_the_project_directory_as_project(tmp_path: Path) -> None:
    write_files(tmp_path, {"notes.md": "hello\n"})

    async def body(client: Client) -> tuple[str, bool]:
        return await call(client, "project__read-file", path="notes.md")

    assert with_client(orchestra_mcp_serve(cwd=tmp_path), body) == ("hello\n", False)


def test_serves_a_sessions_worktrees(tmp_path: Path) -> None:
    project = tmp_path / "project"
    app = make_repo(project / "app", {"README.md": "# App\n"})
    write_files(project, {"orchestra.yaml": "workspace:\n  repos:\n    app:\n      path: app\n"})
    (project / "hello.dot").write_text((EXAMPLES / "hello.dot").read_text(encoding="utf-8"), encoding="utf-8")
    session = run_json("run", "hello.dot", cwd=project)["session_id"]
    worktree = project / ".orchestra" / "worktrees" / session / "app"
    assert worktree.is_dir()

    async def body(client: Client) -> list[tuple[str, bool]]:
        return [
            await call(client, "app__read-file", path="README.md"),
            await call(client, "app__write-file", path="from-mcp.txt", content="x\n"),
        ]

    read, wrote = with_client(orchestra_mcp_serve("--session", session, cwd=project), body)

    assert read == ("# App\n", False) and not wrote[1]
    assert (worktree / "from-mcp.txt").read_text(encoding="utf-8") == "x\n"
    assert not (app.path / "from-mcp.txt").exists()  # the user's checkout is untouched


def test_a_node_gets_exactly_its_agents_tools(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "orchestra.yaml": "agents:\n  reviewer:\n    disallowed_tools: ['*:write-file', '*:edit-file']\n",
            "review.dot": 'digraph r { start [shape=Mdiamond]; exit [shape=Msquare]; '
            'review [agent="reviewer", prompt="Review"]; start -> review -> exit }\n',
            "README.md": "# R\n",
        },
    )

    async def body(client: Client) -> list[object]:
        return [
            await list_names(client),
            await call(client, "project__write-file", path="x.txt", content="x"),
            await call(client, "report_outcome", status="success"),
        ]

    names, write, report = with_client(
        orchestra_mcp_serve("--node", "review", "--pipeline", "review.dot", cwd=tmp_path), body
    )

    assert names == ["project__read-file", "project__search-code", "project__list-files", "report_outcome"]
    assert write[1] and "unknown tool 'project__write-file'" in write[0]
    assert report[0].startswith("Outcome recorded: success") and not report[1]
    assert not (tmp_path / "x.txt").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--node", "review"], "--node and --pipeline go together"),
        (["--repo", "project"], "--repo 'project': expected NAME=PATH"),
        (["--repo", "a:b=."], "the name must be a plain word"),
        (["--repo", "project=missing-dir"], "missing-dir does not exist or is not a directory"),
        (["--repo", "a=.", "--repo", "a=."], "--repo a is given twice"),
        (["--session", "nope"], "no session 'nope': there is no session store"),
        (["--session", "nope", "--repo", "a=."], "give --session or --repo, not both"),
        (["--project", "missing-dir"], "--project missing-dir: not a directory"),
        (["--config", "missing.yaml"], "missing.yaml: config file not found"),
        (["--node", "review", "--pipeline", "missing.dot"], "missing.dot"),
        (["--node", "reveiw", "--pipeline", "review.dot"], "no node 'reveiw' (did you mean review?)"),
        (["--connect", "/tmp/nowhere.sock"], "--connect needs the tool host's token in $ORCHESTRA_MCP_TOKEN"),
        (["--connect", "/tmp/nowhere.sock", "--repo", "a=."], "--connect forwards to a tool host"),
    ],
)
def test_bad_options_exit_2_with_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    write_files(tmp_path, {"review.dot": "digraph r { start [shape=Mdiamond]; exit [shape=Msquare]; "
                                         "review [prompt=\"Review\"]; start -> review -> exit }\n"})

    result = orchestra("mcp", "serve", *args, cwd=tmp_path)

    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("orchestra: error: "), result.stderr
    assert message in lines[0]
    assert not (tmp_path / ".orchestra").exists()


def test_a_bad_orchestra_yaml_exits_2(tmp_path: Path) -> None:
    write_files(tmp_path, {"orchestra.yaml": "workspace:\n  repos:\n    app:\n      path: nowhere\n"})

    result = orchestra("mcp", "serve", cwd=tmp_path)

    assert result.returncode == 2 and result.stdout == ""
    assert "workspace.repos.app.path" in result.stderr and "does not exist" in result.stderr


def test_mcp_alone_shows_its_commands(tmp_path: Path) -> None:
    result = orchestra("mcp", cwd=tmp_path)

    assert "serve" in result.stdout + result.stderr
