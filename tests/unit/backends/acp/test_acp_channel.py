"""What the ACP backend takes from an agent's stdout (one JSON-RPC 2.0 message a line) and where its paths lie."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from orchestra_adapters.backends.acp.channel import parse_message
from orchestra_adapters.backends.acp.files import OutsideWorktree, locate, read_lines, write_inside
from orchestra_core.agents.repo_context import RepoContext


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "id": 1, "result": {"stopReason": "end_turn"}},
        {"jsonrpc": "2.0", "id": 2, "error": {"code": -1, "message": "no"}},
        {"jsonrpc": "2.0", "id": 3, "method": "fs/write_text_file", "params": {"path": "/a", "content": ""}},
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": "s", "update": {"sessionUpdate": "x"}},
        },
    ],
)
def test_json_rpc_messages_pass(message: dict[str, object]) -> None:
    assert parse_message(json.dumps(message).encode()) == (message, "")


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        (b"Loaded 3 extensions", "a line that is not JSON: 'Loaded 3 extensions'"),
        (b"[1, 2]", "not a JSON-RPC 2.0 message"),
        (b'{"id": 1, "result": {}}', "not a JSON-RPC 2.0 message"),
        (b'{"jsonrpc": "2.0", "id": 1}', "neither a request, a notification nor a response"),
        (b'{"jsonrpc": "2.0", "method": 5}', "a request of the wrong shape"),
        (
            b'{"jsonrpc": "2.0", "method": "session/update", "params": {"update": {}}}',
            "a session/update of the wrong shape",
        ),
    ],
)
def test_anything_else_is_malformed_and_said_how(line: bytes, problem: str) -> None:
    message, said = parse_message(line)
    assert message is None and problem in said


def test_a_long_malformed_line_is_shown_cut() -> None:
    _, said = parse_message(b"x" * 10_000)
    assert len(said) < 300 and said.endswith("...'")


@given(st.binary(max_size=200))
def test_any_bytes_are_a_message_or_a_reason(line: bytes) -> None:
    message, said = parse_message(line)
    assert (message is None) == bool(said)


def test_absolute_paths_are_located_in_the_worktree_they_lie_in(tmp_path: Path) -> None:
    front, back = tmp_path / "front", tmp_path / "back"
    front.mkdir()
    back.mkdir()
    repos = [RepoContext("front", front), RepoContext("back", back)]
    repo, relative = locate(str(back / "src" / "a.py"), repos)
    assert (repo.name, relative) == ("back", "src/a.py")
    assert locate(str(back / ".." / "front" / "x"), repos)[1] == "../front/x"  # the guard refuses `..` itself
    for path in ("src/a.py", str(tmp_path / "elsewhere"), None):
        with pytest.raises(OutsideWorktree):
            locate(path, repos)


def test_only_writes_to_files_inside_a_worktree_pass_the_policy(tmp_path: Path) -> None:
    repos = [RepoContext("project", tmp_path)]

    def edit(*paths: str) -> dict[str, object]:
        return {"kind": "edit", "locations": [{"path": path} for path in paths]}

    assert write_inside(edit(str(tmp_path / "a.py")), repos) is None
    assert "outside the node's worktree" in (
        write_inside(edit(str(tmp_path / "a.py"), "/etc/passwd"), repos) or ""
    )
    assert "not a file Orchestra lets agents write" in (
        write_inside(edit(str(tmp_path / ".git" / "config")), repos) or ""
    )
    assert "not a file Orchestra lets agents write" in (
        write_inside(edit(str(tmp_path / "a" / ".." / "..")), repos) or ""
    )
    assert write_inside(edit(), repos) == "a write that names no file"
    assert write_inside({"kind": "execute", "title": "ls"}, repos) == (
        "a call of kind 'execute', neither one of Orchestra's tools nor a write inside the worktree"
    )


def test_read_lines_takes_a_line_and_a_limit() -> None:
    text = "one\ntwo\nthree\n"
    assert read_lines(text, None, None) == text
    assert read_lines(text, 2, None) == "two\nthree\n"
    assert read_lines(text, 2, 1) == "two\n"
    assert read_lines(text, 9, 1) == ""
