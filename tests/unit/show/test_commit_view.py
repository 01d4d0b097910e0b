"""How `orchestra show` prints a traced commit: shortened on a terminal, whole when piped, everything in JSON."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from orchestra_cli.commit_trace import CommitFacts, TracedCommit
from orchestra_cli.commit_view import MAX_CHARS, MAX_LINES, clip, show_json, show_text
from orchestra_core.model.turn import AgentTurn, TokenUsage, ToolCall, TurnCommit
from orchestra_core.ports.git import FileChange, LogEntry
from orchestra_core.ports.session_store import SessionInfo, SessionMetadata, SessionStatus, StoredTurn
from orchestra_core.workspace.correlation import CommitTurn, OrchestraTrailers

SHA, OTHER = "1" * 40, "2" * 40
LONG = "\n".join(f"line {n} " + "x" * 60 for n in range(40))


def traced(*, exact: bool = True, branch_session: str = "1") -> TracedCommit:
    record = AgentTurn(
        node_id="implement",
        turn_number=2,
        model="claude-sonnet-4",
        provider="anthropic",
        messages=(
            {"role": "user", "content": LONG},
            {
                "role": "assistant",
                "content": "Writing it.",
                "tool_calls": [{"id": "c1", "name": "app:write-file"}],
            },
            {"role": "tool", "content": "Wrote 10 bytes", "name": "app:write-file", "tool_call_id": "c1"},
        ),
        tool_calls=(
            ToolCall("app:write-file", {"path": "a.py", "content": LONG}, "c1", result="Wrote 10 bytes"),
            ToolCall("app:run", {"n": 3, "flags": ["-q"]}, "c2", error="exit code 1"),
        ),
        files_written=("app:a.py", "web:b.js"),
        token_usage=TokenUsage(100, 20),
        agent_state_ref="langgraph:t:c",
        duration_s=1.5,
        commits=(
            TurnCommit("app", SHA if exact else OTHER, "Add a\n\nbody", "orchestra/p/1"),
            TurnCommit("web", "3" * 40, "Add b\n\nbody", "orchestra/p/1"),
        ),
    )
    turn = StoredTurn("17", "16", 16, "dev.orchestra.AgentTurn", 2, {}, datetime(2026, 1, 2, tzinfo=UTC))
    entry = LogEntry(
        SHA,
        ("0" * 40,),
        "implement (claude-sonnet-4)",
        "orchestra@local",
        "Orchestra",
        "orchestra@local",
        "2026-01-02T00:00:00+00:00",
        "Add a\n\nbody\n\nOrchestra-Session: 1",
    )
    session = SessionInfo("1", SessionMetadata("p", "Title"), SessionStatus.SUCCESS, None, None, "20", 19)
    return TracedCommit(
        CommitFacts(Path("/repos/app"), entry, (FileChange("a.py", "A"),)),
        OrchestraTrailers("1", "implement", 2, "p", "claude-sonnet-4", "anthropic"),
        Path("/proj"),
        "/proj/.orchestra/orchestra.db",
        session,
        CommitTurn(branch_session, turn, record, exact),
    )


def test_clip_keeps_short_text_and_cuts_long_text_on_a_terminal() -> None:
    assert clip("short\ntext", shorten=True) == "short\ntext"
    assert clip(LONG, shorten=False) == LONG
    clipped = clip(LONG, shorten=True)
    kept = clipped.split(" … (")[0]
    assert LONG.startswith(kept) and len(kept) <= MAX_CHARS and kept.count("\n") < MAX_LINES
    assert clipped.endswith(f"({len(LONG) - len(kept)} more characters; --json shows all)")


def test_text_names_commit_session_node_turn_model_and_other_commits() -> None:
    lines = show_text(traced(), shorten=True)
    assert lines[:4] == [
        f"commit   {SHA[:12]}  Add a",
        "author   implement (claude-sonnet-4) <orchestra@local>  2026-01-02T00:00:00+00:00",
        "repo     app  /repos/app  (branch orchestra/p/1)",
        "files    A a.py",
    ]
    assert "session  1  (success)  Title" in lines and "pipeline p" in lines
    assert "turn     2  (turn id 17)" in lines and "model    claude-sonnet-4  (provider anthropic)" in lines
    assert f"also     web {'3' * 12}  (branch orchestra/p/1)" in lines
    assert "  assistant: Writing it.  [calls app:write-file]" in lines
    assert not any(line.startswith("  tool:") for line in lines)  # tool replies are shown with their calls
    assert lines[-4:] == ["  app:run", "    n: 3", '    flags: ["-q"]', "    error: exit code 1"]
    assert "    result: Wrote 10 bytes" in lines
    assert sum("--json shows all" in line for line in lines) == 2  # the prompt and the long argument


def test_piped_text_is_whole() -> None:
    text = "\n".join(show_text(traced(), shorten=False))
    assert "line 39 " in text and "--json shows all" not in text


def test_a_copy_and_a_branch_session_are_explained() -> None:
    lines = show_text(traced(exact=False, branch_session="5"), shorten=True)
    assert "turn     2  (turn id 17, in the parallel branch's session 5)" in lines
    assert any(
        line.startswith(f"note     this commit is a copy of the recorded one (recorded as {OTHER[:12]})")
        for line in lines
    )


def test_json_has_everything_in_full() -> None:
    document = json.loads(json.dumps(show_json(traced())))
    assert document["commit"]["repo"] == "app" and document["commit"]["files"] == [
        {"path": "a.py", "status": "A"}
    ]
    assert document["turn"]["matched"] == "sha" and document["turn"]["turn_id"] == "17"
    assert document["turn"]["tool_calls"][0]["args"]["content"] == LONG
    assert document["turn"]["tool_calls"][1] == {
        "name": "app:run",
        "call_id": "c2",
        "args": {"n": 3, "flags": ["-q"]},
        "result": None,
        "error": "exit code 1",
    }
    assert document["turn"]["messages"][0]["content"] == LONG
    assert document["session"] == {"session_id": "1", "pipeline": "p", "title": "Title", "status": "success"}


def test_a_copy_other_sessions_also_match_are_named() -> None:
    from attrs import evolve

    shown = evolve(traced(exact=False), others=("session 1 in /other/.orchestra/orchestra.db",))
    lines = show_text(shown, shorten=False)
    assert "note     the same node, turn and subject were also recorded by" in lines
    assert "           session 1 in /other/.orchestra/orchestra.db" in lines
    assert show_json(shown)["turn"]["also_matches"] == ["session 1 in /other/.orchestra/orchestra.db"]
    assert show_json(traced())["turn"]["also_matches"] == []
