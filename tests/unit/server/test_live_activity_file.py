"""A CLI run's live activity file, which `orchestra serve` tails: written by the run's observer, read a piece at a
time from where the reader stands, started again past its size, and only well-formed activities taken from it."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

from orchestra_adapters.console import live_activity
from orchestra_adapters.console.live_activity import ActivityTail, ActivityWriter, activity_path
from orchestra_core.model.events import AgentActivity, PipelineStarted

NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def started(session: str = "7", branch: str | None = None) -> PipelineStarted:
    return PipelineStarted(
        session_id=session, timestamp=NOW, branch=branch, name="p", goal="", logs_root="", start_node="start"
    )


def said(text: str, node: str = "plan", branch: str | None = None) -> AgentActivity:
    return AgentActivity(session_id="7", timestamp=NOW, branch=branch, node_id=node, activity="text", text=text, turn=0)


def test_the_runs_activity_is_read_from_where_the_reader_stands(tmp_path: Path) -> None:
    writer = ActivityWriter(tmp_path)
    writer.on_event(said("before the run started: nowhere to write"))
    writer.on_event(started("child", branch="fan:a"))  # a branch's start names no file
    writer.on_event(started())
    path = activity_path(tmp_path, "7")
    assert not path.exists()
    writer.on_event(said("<b>one</b>"))
    new_page = ActivityTail(path, from_start=True)
    reconnected = ActivityTail(path, from_start=False)
    writer.on_event(said("two", branch="fan:a"))
    assert [(a["text"], a["branch"], a["turn"]) for a in new_page.read()] == [("<b>one</b>", None, 0), ("two", "fan:a", 0)]
    assert [a["text"] for a in reconnected.read()] == ["two"]
    assert new_page.read() == []
    assert (path.stat().st_mode & 0o777, path.parent.stat().st_mode & 0o777) == (0o600, 0o700)


def test_the_file_starts_again_past_its_size_and_the_reader_follows(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(live_activity, "MAX_BYTES", 1000)
    writer = ActivityWriter(tmp_path)
    writer.on_event(started())
    path = activity_path(tmp_path, "7")
    tail = ActivityTail(path, from_start=True)
    for number in range(5):
        writer.on_event(said(f"{number}" * 150))
    assert path.stat().st_size <= 1000
    texts = [a["text"][0] for a in tail.read()]
    assert texts and texts[-1] == "4" and len(texts) < 5  # what was read before the new file is gone from it


def test_only_well_formed_activities_are_taken_and_a_partial_line_waits(tmp_path: Path) -> None:
    path = tmp_path / "activity.jsonl"
    lines = [
        "not json",
        '["a list"]',
        '{"kind": "StageStarted", "node_id": "x"}',
        '{"kind": "AgentActivity", "node_id": 5, "text": {"x": 1}, "turn": true, "error": "yes", "branch": 3}',
        '{"kind": "AgentActivity", "node_id": "n", "activity": "tool_call", "text": "' + "x" * 5000 + '"}',
    ]
    path.write_text("\n".join(lines) + '\n{"kind": "AgentActivity", "node_id": "late"', encoding="utf-8")
    tail = ActivityTail(path, from_start=True)
    first, second = tail.read()
    assert (first["node_id"], first["text"], first["turn"], first["error"], first["branch"]) == ("", "", None, False, None)
    assert second["activity"] == "tool_call" and len(second["text"]) == 4000
    with path.open("a", encoding="utf-8") as file:
        file.write(', "text": "now whole"}\n')
    [late] = tail.read()
    assert (late["node_id"], late["text"]) == ("late", "now whole")


def test_a_fifo_or_a_symlink_planted_as_the_file_blocks_neither_the_run_nor_the_server(tmp_path: Path) -> None:
    writer = ActivityWriter(tmp_path)
    writer.on_event(started())
    path = activity_path(tmp_path, "7")
    path.parent.mkdir(parents=True)
    os.mkfifo(path)  # an unconfined command of an agent's could plant one: opening it for reading or writing blocks
    tail = ActivityTail(path, from_start=True)
    writer.on_event(said("not written, and the run goes on"))
    assert tail.read() == []
    path.unlink()
    secret = tmp_path / "secret.jsonl"
    secret.write_text('{"kind": "AgentActivity", "node_id": "x", "activity": "text", "text": "secret"}\n')
    path.symlink_to(secret)
    writer.on_event(said("not through the link"))
    assert ActivityTail(path, from_start=True).read() == []
    assert "not through" not in secret.read_text()
