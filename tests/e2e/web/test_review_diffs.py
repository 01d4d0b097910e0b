"""Reviewing what agents changed, in the browser: a turn's diff beside its messages and tool calls (unified or
side by side, coloured), a node's diff over all its turns, the session's whole diff against its base, a large file
cut short with its rest on demand and a link to the file, and agent-written text (replies, file names, contents,
labels) shown as text."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.support.git_repos import make_repo
from tests.support.orchestra_project import SCRIPTED_PROVIDER, write_files
from tests.support.server import LiveServer

MARKUP = "<img src=x onerror=window.pwned=1><script>window.pwned=2</script>"
EVIL_NAME = "<b onmouseover=window.pwned=3>evil</b>.py"
BIG_LINES = 4000
PIPELINE = """digraph review {
  start [shape=Mdiamond]; exit [shape=Msquare]
  plan [label="Plan <i>it</i>", prompt="Write the code"]
  polish [prompt="Polish it"]
  start -> plan -> polish -> exit
}
"""
FIRST = f'def answer():\n    return "{MARKUP}"  # the first try\n'
SECOND = 'def answer():\n    return 42  # better\n'
BIG = "".join(f"line {number}\n" for number in range(BIG_LINES))


def cassette() -> str:
    write = "project:write-file"
    turns = {
        "plan": [
            {"content": f"First draft {MARKUP}", "tool_calls": [{"name": write, "args": {"path": EVIL_NAME, "content": FIRST}}]},
            {"content": "Second draft", "tool_calls": [{"name": write, "args": {"path": EVIL_NAME, "content": SECOND}}]},
            {"content": "Done."},
        ],
        "polish": [
            {"content": "A big one", "tool_calls": [{"name": write, "args": {"path": "big.txt", "content": BIG}}]},
            {"content": "Done."},
        ],
    }
    return json.dumps({"nodes": turns, "default": "Done."})  # YAML reads JSON


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LiveServer]:
    make_repo(tmp_path / "repo", {"README.md": "hello\n"})
    project = tmp_path / "project"
    workspace = "workspace:\n  repos:\n    project: {path: ../repo}\n"
    write_files(project, {"orchestra.yaml": SCRIPTED_PROVIDER + workspace, "cassette.yaml": cassette()})
    live = LiveServer(project)
    yield live
    live.stop()


def ready(page: Any, scope: str) -> None:
    page.wait_for_selector(f'#review[data-state="ready"][data-scope="{scope}"]')


def test_a_turn_shows_its_diff_beside_its_messages_and_a_node_and_the_session_theirs(
    server: LiveServer, page: Any
) -> None:
    session_id = server.submit(PIPELINE)
    assert server.ended(session_id)["status"] == "success"
    page.goto(f"{server.url}/view/{session_id}")
    page.wait_for_selector('#events li[data-kind="end"]')

    # the second turn of plan: EVIL_NAME modified, beside its messages and tool call
    page.click("#turns button[data-label='plan · turn 1']")
    ready(page, "turn")
    assert page.text_content("#review-turn").count("Second draft") == 1
    assert page.text_content("#review-files .file-path") == EVIL_NAME
    removed = page.eval_on_selector_all("table.diff tr.del td.code", "cells => cells.map(c => c.textContent)")
    added = page.eval_on_selector_all("table.diff tr.add td.code", "cells => cells.map(c => c.textContent)")
    assert removed == [f'-    return "{MARKUP}"  # the first try']
    assert added == ["+    return 42  # better"]
    assert page.text_content("table.diff tr.add .tok-k") == "return"  # our token colouring
    assert page.text_content("table.diff tr.add .tok-c") == "# better"
    page.click('#review-mode button[data-mode="split"]')
    pair = page.eval_on_selector_all("table.diff.split tr.pair td.code", "cells => cells.map(c => c.textContent)")
    assert pair[0].startswith('    return "<img') and pair[1] == "    return 42  # better"

    # the first turn: the reply with markup, as text
    page.click("#turns button[data-label='plan · turn 0']")
    ready(page, "turn")
    assert f"First draft {MARKUP}" in page.text_content("#review-turn")
    assert page.get_attribute("#review-files .file-status", "title") == "added"

    # the node over both its turns: one range of 2 commits, the file as added with its last content
    page.click("#graph g.node[data-node='plan']")
    ready(page, "node")
    assert "2 commits" in page.text_content("#review-files .section-title")
    assert page.eval_on_selector_all("table.diff tr.del", "rows => rows.length") == 0
    assert "return 42" in page.text_content("table.diff")
    page.focus("#graph g.node[data-node='polish']")
    page.keyboard.press("Enter")
    ready(page, "node")
    assert page.text_content("#review-files .file-path") == "big.txt"

    # the whole session: both files, big.txt cut short, its rest on demand, and a link to the file
    page.click("#session-diff")
    ready(page, "session")
    assert page.evaluate("document.activeElement.id") == "review-title"  # focus moved to what was opened
    paths = page.eval_on_selector_all("#review-files .file-path", "items => items.map(i => i.textContent)")
    assert sorted(paths) == sorted([EVIL_NAME, "big.txt"])
    big = '#review-files details.diff-file[data-path="big.txt"]'
    shown = page.eval_on_selector_all(f"{big} tr", "rows => rows.length")
    assert shown < BIG_LINES and "Showing" in page.text_content(f"{big} .truncated")
    link = page.get_attribute(f"{big} a.file-link", "href")
    assert requests.get(server.url + link, timeout=30).text == BIG
    page.click(f"{big} button.more")
    page.wait_for_function(
        f"() => document.querySelectorAll('{big} tr').length === {BIG_LINES + 1}"  # the hunk header, every line
    )
    assert page.query_selector(f"{big} button.more") is None
    page.keyboard.press("Escape")
    assert page.is_hidden("#review")

    assert page.query_selector_all("main img, main script, main b, main i") == []
    assert page.evaluate("window.pwned") is None


def test_a_turn_without_commits_and_bad_requests_answer_clearly(server: LiveServer) -> None:
    session_id = server.submit(PIPELINE)
    server.ended(session_id)
    turns = server.get(f"/sessions/{session_id}").json()["turns"]
    quiet = next(t for t in turns if t["type"].endswith("AgentTurn") and not t["git_sha"])
    answer = server.get(f"/sessions/{session_id}/diff?turn={quiet['turn_id']}").json()
    assert answer["sections"] == [] and answer["turn"]["messages"]
    assert server.get(f"/sessions/{session_id}/diff?turn=99999").status_code == 404
    assert server.get(f"/sessions/{session_id}/diff?node=nowhere").status_code == 404
    assert server.get(f"/sessions/{session_id}/diff?turn=1&node=plan").status_code == 400
    assert server.get("/sessions/404/diff").status_code == 404
    head = server.get(f"/sessions/{session_id}").json()["repos"]["project"]["head_sha"]
    for bad in ("--output=/tmp/x", "HEAD", "abc"):
        assert server.get(f"/sessions/{session_id}/file?repo=project&sha={bad}&path=big.txt").status_code == 400
    pathspec = server.get(f"/sessions/{session_id}/file?repo=project&sha={head}&path=:(glob)*.txt")
    assert pathspec.status_code == 404  # a path is a path, never pathspec magic
