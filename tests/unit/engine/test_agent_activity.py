"""Agents' live activity: a backend taking `on_activity` has its text coalesced and its tool calls passed on as the
stage's AgentActivity events, before the node ends; they are shown live and never recorded in the session."""

from __future__ import annotations

from typing import Any

from orchestra_core import parse_pipeline, run_pipeline
from orchestra_core.handlers.activity import ActivityFeed
from orchestra_core.model.activity import MAX_ACTIVITY_TEXT, TEXT, TOOL_CALL, TOOL_RESULT, Activity
from orchestra_core.model.context import Context
from orchestra_core.model.events import AgentActivity, StageCompleted
from orchestra_core.model.graph import Node
from orchestra_core.model.turn import AgentTurn
from orchestra_core.testing.session_store import InMemorySessionStore


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_text_coming_faster_than_the_interval_goes_as_one_event_and_tool_calls_go_at_once() -> None:
    sent: list[Activity] = []
    clock = Clock()
    feed = ActivityFeed(sent.append, interval_s=0.1, clock=clock)
    feed(Activity(kind=TEXT, text="Hel", turn=0))  # the first text goes at once
    for token in ("lo", ", ", "wor", "ld"):
        clock.now += 0.01
        feed(Activity(kind=TEXT, text=token, turn=0))
    assert [a.text for a in sent] == ["Hel"]
    clock.now += 0.2
    feed(Activity(kind=TEXT, text="!", turn=0))  # past the interval: what waited goes with it
    assert [a.text for a in sent] == ["Hel", "lo, world!"]
    feed(Activity(kind=TEXT, text=" Now", turn=0))
    feed(Activity(kind=TOOL_CALL, tool="project:read-file", text='{"path": "a"}', call_id="c1", turn=0))
    assert [(a.kind, a.text) for a in sent[2:]] == [(TEXT, " Now"), (TOOL_CALL, '{"path": "a"}')]
    feed(Activity(kind=TEXT, text="tail", turn=1))
    clock.now += 0.01
    feed(Activity(kind=TEXT, text=" end", turn=1))
    feed.close()
    assert [(a.text, a.turn) for a in sent[4:]] == [("tail end", 1)]  # both within the interval: sent at the end


def test_long_text_is_sent_in_pieces_and_a_long_tool_result_is_cut() -> None:
    sent: list[Activity] = []
    feed = ActivityFeed(sent.append, interval_s=0)
    feed(Activity(kind=TEXT, text="x" * (MAX_ACTIVITY_TEXT * 2 + 5)))
    feed(Activity(kind=TOOL_RESULT, text="y" * (MAX_ACTIVITY_TEXT + 100), tool="t", error=True))
    assert [len(a.text) for a in sent] == [MAX_ACTIVITY_TEXT, MAX_ACTIVITY_TEXT, 5, MAX_ACTIVITY_TEXT]
    assert sent[-1].text.endswith("…") and sent[-1].error


class LiveBackend:
    """Reports a streamed reply and a tool call, then its turn; checks the engine heard them before the turn."""

    def __init__(self, events: list[Any]) -> None:
        self.events = events
        self.seen_before_turn: list[str] = []

    def run(self, node: Node, prompt: str, context: Context, on_turn: Any = None, *, on_activity: Any = None) -> str:
        for token in ["<b>Plan", "ning", "</b> ", "now"]:
            on_activity(Activity(kind=TEXT, text=token, turn=0))
        on_activity(Activity(kind=TOOL_CALL, tool="project:write-file", text='{"path": "<i>x</i>"}', call_id="1", turn=0))
        on_activity(Activity(kind=TOOL_RESULT, tool="project:write-file", text="wrote", call_id="1", turn=0))
        self.seen_before_turn = [e.activity for e in self.events if isinstance(e, AgentActivity)]
        on_turn(AgentTurn(node_id=node.id, turn_number=0, model="m", provider="p"))
        on_activity(Activity(kind=TEXT, text="Done.", turn=1))
        return "Done."


def test_a_backend_taking_on_activity_streams_the_stages_events_which_the_session_does_not_record() -> None:
    graph = parse_pipeline('digraph g { start [shape=Mdiamond]; exit [shape=Msquare]; plan [prompt="p"]; start -> plan -> exit }')
    events: list[Any] = []
    backend = LiveBackend(events)
    store = InMemorySessionStore()
    result = run_pipeline(graph, backend=backend, store=store, on_event=events.append)
    assert result.succeeded
    live = [e for e in events if isinstance(e, AgentActivity)]
    assert backend.seen_before_turn == [TEXT, TEXT, TOOL_CALL, TOOL_RESULT]  # heard as they happened
    assert [(e.node_id, e.activity, e.text, e.tool) for e in live] == [
        ("plan", TEXT, "<b>Plan", ""),  # the first text at once,
        ("plan", TEXT, "ning</b> now", ""),  # the tokens after it coalesced (they came within the interval)
        ("plan", TOOL_CALL, '{"path": "<i>x</i>"}', "project:write-file"),
        ("plan", TOOL_RESULT, "wrote", "project:write-file"),
        ("plan", TEXT, "Done.", ""),  # pending text goes when the backend returns
    ]
    assert all(e.session_id == result.session_id and e.branch is None for e in live)
    completed = next(i for i, e in enumerate(events) if isinstance(e, StageCompleted) and e.node_id == "plan")
    assert events.index(live[-1]) < completed
    stored = store.turns(result.session_id, limit=1000).turns
    assert stored and not [t for t in stored if "Activity" in t.type_id]
    assert "ning</b>" not in repr([t.data for t in stored])
