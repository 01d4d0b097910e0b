"""The LangGraph backend streams a watched agent's reply: its text is heard chunk by chunk while the model writes
it (the scripted model held mid-reply), and the turn recorded is the one an unwatched (invoked) run records."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from attrs import asdict

from orchestra_adapters.backends.langgraph_backend import LangGraphBackend
from orchestra_core.model.activity import TEXT, Activity
from orchestra_core.model.context import Context
from orchestra_core.model.graph import Node
from orchestra_core.model.turn import AgentTurn

Backend = Callable[..., LangGraphBackend]
VARYING = ("agent_state_ref", "duration_s", "started_at", "ended_at")

TURNS = """\
nodes:
  implement:
    - content: "Let me  look around\\n\\nfirst, <b>please</b>."
      tool_calls:
        - {name: "project:explode"}
        - {name: "project:read-file", args: {path: README.md}}
    - content: "Writing."
      tool_calls:
        - {name: "project:write-file", args: {path: hello.py, content: "print('héllo')\\n"}}
      usage: {input_tokens: 900, output_tokens: 40, cache_read_tokens: 600, cache_write_tokens: 100}
    - tool_calls:
        - {name: "project:write-file", args: {path: b.txt, content: "nested {\\"a\\": [1, 2]}"}}
    - content: "Done: hello.py greets."
"""


def context(session: str) -> Context:
    return Context({"internal.session_id": session, "internal.fidelity": "compact"})


def comparable(turn: AgentTurn) -> str:
    """An AgentTurn's fields, but for what differs between any two runs: tool call ids, checkpoint, times."""
    fields = {name: value for name, value in asdict(turn, recurse=False).items() if name not in VARYING}
    fields["tool_calls"] = [(c.name, dict(c.args), c.result, c.error) for c in turn.tool_calls]
    text = repr(fields)
    ids = [call["id"] for message in turn.messages for call in message.get("tool_calls") or []]
    for number, call_id in enumerate(ids):
        text = text.replace(call_id, f"call-{number}")
    return text


def run(backend: LangGraphBackend, session: str, on_activity: Any = None) -> tuple[str | Any, list[AgentTurn]]:
    turns: list[AgentTurn] = []
    result = backend.run(Node("implement"), "Add hello.", context(session), turns.append, on_activity=on_activity)
    return result, turns


def test_a_streamed_turn_is_recorded_as_the_invoked_turn(make_backend: Backend, tmp_path: Path) -> None:
    heard: list[Activity] = []
    invoked_result, invoked = run(make_backend(TURNS), "invoked")
    streamed_result, streamed = run(make_backend(TURNS), "streamed", heard.append)
    assert streamed_result == invoked_result == "Done: hello.py greets."
    assert len(streamed) == len(invoked) == 4
    assert "call-1" in comparable(streamed[0])  # the calls are compared, their ids aside
    assert [comparable(turn) for turn in streamed] == [comparable(turn) for turn in invoked]
    assert streamed[1].token_usage == invoked[1].token_usage  # the scripted usage, cache reads and writes
    assert streamed[1].token_usage.prompt_tokens == 900
    assert [len(turn.tool_calls) for turn in streamed] == [2, 1, 1, 0]
    texts = [activity.text for activity in heard if activity.kind == TEXT and activity.turn == 0]
    assert len(texts) > 3  # word by word, not the whole message
    assert "".join(texts) == "Let me  look around\n\nfirst, <b>please</b>."


def test_the_text_is_heard_while_the_reply_is_still_being_written(make_backend: Backend, tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    backend = make_backend('nodes:\n  implement:\n    - {content: "First words then the rest.", hold: gate}\n')
    heard: list[Activity] = []
    turns: list[AgentTurn] = []
    results: list[Any] = []
    worker = threading.Thread(
        target=lambda: results.append(
            backend.run(Node("implement"), "Go.", context("held"), turns.append, on_activity=heard.append)
        )
    )
    worker.start()
    try:
        deadline = time.monotonic() + 20
        while not heard and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.2)  # the rest would have come by now were it not held
        assert [activity.text for activity in heard] == ["First"]
        assert (turns, results) == ([], [])  # the reply, and so the turn, is not over
    finally:
        gate.touch()
        worker.join(20)
    assert results == ["First words then the rest."]
    assert "".join(activity.text for activity in heard) == "First words then the rest."
    assert [turn.turn_number for turn in turns] == [0]


def test_an_unwatched_run_does_not_wait_on_a_streaming_hold(make_backend: Backend) -> None:
    """Without `on_activity` the model is invoked: a reply's `hold` (a streaming pause) does not apply."""
    backend = make_backend('nodes:\n  implement:\n    - {content: "Never held here.", hold: never}\n')
    assert run(backend, "unwatched")[0] == "Never held here."
