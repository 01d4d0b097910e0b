"""An agent attacks its confinement through `orchestra run`, with only what a pipeline's agent has: the
built-in tools and the project tools of orchestra.yaml. Every attempt is a tool error the model reads, the
run goes on, nothing lands in git's or Orchestra's own files, and `git fsck --strict` of the session branch
is clean."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestra_core.model.turn import AgentTurn
from tests.support.git_repos import git
from tests.support.orchestra_project import agent_turns, orchestra, write_files

PIPELINE = """digraph attack {
    start [shape=Mdiamond]; exit [shape=Msquare]
    work [prompt="Do the work", agent.tools="project:show"]
    start -> work -> exit
}
"""

HOSTILE_CONFIG = "[core]\n\tfsmonitor = touch {marker}\n"


def _write(path: str, content: str) -> dict[str, object]:
    return {"name": "project:write-file", "args": {"path": path, "content": content}}


def _cassette(marker: Path, outside: Path) -> dict[str, object]:
    attacks = [
        _write("gl/config", HOSTILE_CONFIG.format(marker=marker)),
        _write("gl/hooks/post-commit", f"#!/bin/sh\ntouch {marker}\n"),
        _write(".Git/config", "x"),
        _write(".GIT/hooks/pre-commit", "x"),
        _write(".git./x", "x"),
        _write("git~1/x", "x"),
        _write("src/.git/config", "x"),
        _write("st/orchestra.db", "corrupted"),
        _write(".orchestra/orchestra.db", "corrupted"),
        _write(".gitmodules", '[submodule "x"]\n\tpath = x\n\turl = --upload-pack=touch ' + str(marker) + "\n"),
        _write("new\nline.txt", "x"),
        {"name": "project:show", "args": {"rev": f"--output={outside}"}},
        _write("tab\tand 'quote'.txt", "odd but fine\n"),
        _write("-dash and ünïcode.txt", "also fine\n"),
        _write("ok.txt", "legit\n"),
    ]
    turns = [{"content": f"attempt {n}", "tool_calls": [call]} for n, call in enumerate(attacks)]
    return {"nodes": {"work": [*turns, {"content": "done"}]}, "commit_messages": ["Agent work"] * 4}


def _project(tmp_path: Path, isolation: str) -> tuple[Path, Path, Path]:
    root = tmp_path / "project"
    marker, outside = tmp_path / "PWNED", tmp_path / "outside.txt"
    write_files(root, {"src/app.py": "print('hi')\n", "pipeline.dot": PIPELINE})
    (root / "gl").symlink_to(".git")
    (root / "st").symlink_to(".orchestra")
    (root / "cassette.yaml").write_text(json.dumps(_cassette(marker, outside)), encoding="utf-8")
    (root / "orchestra.yaml").write_text(
        json.dumps(
            {
                "providers": {"default": "scripted", "scripted": {"cassette": "cassette.yaml"}},
                "backend": "langgraph",
                "workspace": {
                    "repos": {"project": {"path": ".", "isolation": isolation}},
                    "tools": {"project": {"show": {"command": "git log -1 {rev}", "parameters": {"rev": {}}}}},
                },
            }
        ),
        encoding="utf-8",
    )
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "Start")
    return root, marker, outside


@pytest.mark.slow
@pytest.mark.parametrize("isolation", ["in_place", "worktree"])
def test_an_agent_cannot_leave_its_worktree(tmp_path: Path, isolation: str) -> None:
    root, marker, outside = _project(tmp_path, isolation)
    ran = orchestra("run", "pipeline.dot", "--json", cwd=root)
    assert ran.returncode == 0, ran.stderr + ran.stdout
    document = json.loads(ran.stdout)
    branch = document["repos"]["project"]["branch"]

    turns = [turn for _stored, turn in agent_turns(root, document["session_id"])]
    errors = [call.error for turn in turns for call in turn.tool_calls if call.error]
    assert len(errors) == 12, errors
    assert "would be read as an option" in errors[11]
    assert not marker.exists() and not outside.exists()
    assert "fsmonitor" not in (root / ".git" / "config").read_text()  # Orchestra's own project link is there
    assert not (root / ".git" / "hooks" / "post-commit").exists()
    git(root, "fsck", "--strict", "--no-dangling", branch)  # raises on hasDotgit / gitmodulesUrl
    committed = git(root, "ls-tree", "-r", "-z", "--name-only", branch).split("\0")
    assert {"tab\tand 'quote'.txt", "-dash and ünïcode.txt", "ok.txt"} <= set(committed)
    assert not any(name.lower().startswith((".git/", "git~1")) for name in committed)
    assert ".gitmodules" not in committed and "new\nline.txt" not in committed
    status = orchestra("status", document["session_id"], cwd=root)
    assert status.returncode == 0, status.stderr  # the store was never written by the agent
    assert _turn_of(turns, "ok.txt").commits


def _turn_of(turns: list[AgentTurn], path: str) -> AgentTurn:
    return next(turn for turn in turns if any(call.args.get("path") == path for call in turn.tool_calls))
