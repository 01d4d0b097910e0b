"""`orchestra status SESSION --json --limit N --after TURN` pages a session's turns; bad values exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestra_adapters.storage.sqlite_store import SqliteSessionStore
from tests.support.long_sessions import build_long_session
from tests.support.orchestra_project import orchestra, run_json


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("pages")
    with SqliteSessionStore(root / ".orchestra" / "orchestra.db") as store:
        return root, build_long_session(store, 300)


def test_pages_walk_the_whole_session_in_order(project: tuple[Path, str]) -> None:
    root, session = project
    full = run_json("status", session, cwd=root)
    assert "has_more" not in full  # without --limit and --after, the document is today's
    seen: list[str] = []
    page = run_json("status", session, "--limit", "120", cwd=root)
    while True:
        seen += [turn["turn_id"] for turn in page["turns"]]
        assert page["tokens"] == full["tokens"] and page["status"] == full["status"]
        if not page["has_more"]:
            assert page["next_after"] is None
            break
        assert page["next_after"] == page["turns"][-1]["turn_id"] and len(page["turns"]) == 120
        page = run_json("status", session, "--limit", "120", "--after", page["next_after"], cwd=root)
    assert seen == [turn["turn_id"] for turn in full["turns"]]
    default = run_json("status", session, "--after", seen[9], cwd=root)
    assert [turn["turn_id"] for turn in default["turns"]] == seen[10:60]  # a page holds 50 turns by default


def test_text_status_lists_a_page_and_says_how_to_get_the_next(project: tuple[Path, str]) -> None:
    root, session = project
    turns = [turn["turn_id"] for turn in run_json("status", session, cwd=root)["turns"]]
    result = orchestra("status", session, "--after", turns[0], "--limit", "7", cwd=root)
    assert result.returncode == 0, result.stderr
    assert f"turns after turn {turns[0]}, at most 7:" in result.stdout
    assert f"orchestra status {session} --after {turns[7]}" in result.stdout
    shown = orchestra("status", session, "--limit", "3", cwd=root)
    assert "agent turns" in shown.stdout and "the last 3 of" in shown.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--limit", "0"], "--limit must be at least 1"),
        (["--after", "abc"], "turn 'abc' is not a turn of session"),
        (["--after", "987654321"], "turn '987654321' is not a turn of session"),
        (["--all", "--limit", "5"], "--all shows every turn of a session"),
    ],
)
def test_bad_page_values_exit_2_with_a_clear_message(project: tuple[Path, str], args: list[str], message: str) -> None:
    root, session = project
    for json_flag in ([], ["--json"]):
        result = orchestra("status", session, *args, *json_flag, cwd=root)
        assert result.returncode == 2, result.stdout + result.stderr
        assert message in result.stderr


def test_after_without_a_session_exits_2(project: tuple[Path, str]) -> None:
    result = orchestra("status", "--after", "3", cwd=project[0])
    assert result.returncode == 2 and "--after needs a SESSION" in result.stderr
