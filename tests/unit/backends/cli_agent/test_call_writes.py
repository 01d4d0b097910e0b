"""CallWrites: which turn of a CLI agent's stream each write belongs to, when the agent runs ahead of the stream."""

from __future__ import annotations

from typing import Any

from orchestra_adapters.backends.cli_agent.call_writes import CallWrites
from orchestra_adapters.tools.toolbox import ExecutedCall
from orchestra_core.agents.tools import WriteTracker
from orchestra_core.model.turn import FileVersion, ToolCall

WRITE = "project:write-file"
READ = "project:read-file"


class _Agent:
    """Plays tool calls through the host's side of CallWrites: each records its writes, then the host reports it."""

    def __init__(self) -> None:
        self.contents: dict[str, str] = {}
        self.tracker = WriteTracker(lambda repo, path: FileVersion("100644", self.contents[path]))
        self.calls = CallWrites(self.tracker)

    def call(self, name: str, writes: dict[str, str] | None = None, **arguments: Any) -> ToolCall:
        for path, blob in (writes or {}).items():
            self.contents[path] = blob
            self.tracker.record("project", path)
        record = ToolCall(name, arguments, f"mcp-{len(self.contents)}", result="ok")
        self.calls.on_call(ExecutedCall(record))
        return ToolCall(name, arguments, "toolu-x")  # as the stream shows it: its own call id


def test_a_turn_claims_its_calls_writes_as_written_while_later_turns_wait() -> None:
    agent = _Agent()
    first = agent.call(WRITE, {"a.py": "a1"}, path="a.py", content="A = 1")
    second = agent.call(READ, path="a.py")
    third = [agent.call(WRITE, {"b.py": "b2"}, path="b.py", content="B = 2"),
             agent.call(WRITE, {"a.py": "a3"}, path="a.py", content="A = 3")]  # fmt: skip
    assert agent.calls.pending() == {"project:a.py", "project:b.py"}
    claimed = agent.calls.claim([first])
    assert claimed.files == ("project:a.py",) and claimed.versions == {"project:a.py": FileVersion("100644", "a1")}
    assert agent.calls.claim([second]).files == ()
    claimed = agent.calls.claim(third)
    assert claimed.files == ("project:b.py", "project:a.py")
    assert claimed.versions["project:a.py"] == FileVersion("100644", "a3")
    assert agent.calls.pending() == set() and agent.calls.unclaimed().files == ()


def test_the_same_call_twice_is_claimed_in_call_order() -> None:
    agent = _Agent()
    one = agent.call(WRITE, {"a.py": "x1"}, path="a.py", content="same")
    agent.call(WRITE, {"a.py": "x2"}, path="a.py", content="same")
    assert agent.calls.claim([one]).versions == {"project:a.py": FileVersion("100644", "x1")}
    assert agent.calls.claim([one]).versions == {"project:a.py": FileVersion("100644", "x2")}


def test_calls_the_stream_never_showed_go_with_the_next_turn_that_follows_them_or_are_left_unclaimed() -> None:
    agent = _Agent()
    agent.call(WRITE, {"hidden.py": "h"}, path="hidden.py", content="not in the stream")
    shown = agent.call(WRITE, {"a.py": "a"}, path="a.py", content="A")
    agent.call(WRITE, {"late.py": "l"}, path="late.py", content="after the turn")
    assert agent.calls.claim([shown]).files == ("project:hidden.py", "project:a.py")
    denied = ToolCall(WRITE, {"path": "never-ran.py", "content": "x"}, "toolu-denied")
    assert agent.calls.claim([denied]).files == ()  # a call the host never ran claims nothing
    assert agent.calls.unclaimed().files == ("project:late.py",)


def test_arguments_match_whatever_their_spelling() -> None:
    agent = _Agent()
    agent.call(WRITE, {"a.py": "a"}, path="a.py", content="A", options={"mode": [1, 2]})
    shown = ToolCall(WRITE, {"options": {"mode": (1, 2)}, "content": "A", "path": "a.py"}, "toolu-1")
    assert agent.calls.claim([shown]).files == ("project:a.py",)


def test_calls_shown_without_arguments_take_those_of_the_hosts_next_calls_of_their_tool() -> None:
    agent = _Agent()
    shown = agent.call(WRITE, {"a.py": "a"}, path="a.py", content="A")
    agent.call(READ, path="README.md")
    agent.call(WRITE, {"b.py": "b"}, path="b.py", content="B")
    # Gemini CLI over ACP: the tool is named, its arguments are not; one call of the turn does show its own
    bare = [ToolCall(WRITE, {}, "g-1"), ToolCall(READ, {}, "g-2"), shown, ToolCall(READ, {}, "g-3")]
    filled = agent.calls.with_arguments(bare)
    assert [call.args for call in filled] == [
        {"path": "b.py", "content": "B"}, {"path": "README.md"}, {"path": "a.py", "content": "A"}, {}
    ]  # fmt: skip
    assert [call.call_id for call in filled] == ["g-1", "g-2", "toolu-x", "g-3"]
    assert agent.calls.claim(filled).files == ("project:a.py", "project:b.py")


def test_a_call_shown_under_another_name_is_named_by_the_unclaimed_host_call_with_its_arguments() -> None:
    agent = _Agent()
    shown = agent.call(WRITE, {"a.py": "a1"}, path="a.py", content="A = 1")
    assert agent.calls.name_for({"content": "A = 1", "path": "a.py"}) == WRITE
    assert agent.calls.name_for({"path": "a.py"}) is None
    agent.calls.claim([shown])
    assert agent.calls.name_for({"content": "A = 1", "path": "a.py"}) is None  # claimed: no longer a candidate
