"""CLI agents' output streams (lines as the real Claude Code 2.1 and Codex 0.169 print them) read into turns."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from orchestra_adapters.backends.cli_agent.claude_code import ClaudeStreamParser
from orchestra_adapters.backends.cli_agent.codex import CodexStreamParser
from orchestra_adapters.backends.cli_agent.events import AgentResult, AgentStarted, ModelCall, ModelSwitched
from orchestra_adapters.backends.cli_agent.turns import TurnAssembler, TurnDraft
from orchestra_core.model.turn import TokenUsage

SESSION = "459af5c4-636d-489a-8337-f24ef24a7e81"


def _line(record: dict[str, Any]) -> str:
    return json.dumps(record) + "\n"


def _claude_usage(prompt: int) -> dict[str, int]:
    return {
        "input_tokens": prompt,
        "output_tokens": 1,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }


def _assistant(message_id: str, block: dict[str, Any], prompt: int = 100) -> str:
    message = {"id": message_id, "role": "assistant", "content": [block], "usage": _claude_usage(prompt)}
    return _line({"type": "assistant", "message": message, "session_id": SESSION})


def _tool_result(call_id: str, text: str, *, is_error: bool = False) -> str:
    block: dict[str, Any] = {"tool_use_id": call_id, "type": "tool_result", "content": text}
    if is_error:
        block["is_error"] = True
    return _line({"type": "user", "message": {"role": "user", "content": [block]}, "session_id": SESSION})


CLAUDE_RUN = [
    "not json: a warning the CLI printed\n",
    _line(
        {
            "type": "system",
            "subtype": "init",
            "session_id": SESSION,
            "tools": ["mcp__orchestra__project__write-file"],
            "mcp_servers": [{"name": "orchestra", "status": "connected", "source": "dynamic"}],
            "model": "claude-test",
        }
    ),
    _assistant("msg_1", {"type": "text", "text": "Writing."}),
    _assistant(
        "msg_1",
        {
            "type": "tool_use",
            "id": "toolu_1",
            "name": "mcp__orchestra__project__write-file",
            "input": {"path": "a"},
        },
    ),
    _assistant("msg_1", {"type": "tool_use", "id": "toolu_2", "name": "Read", "input": {"file_path": "/x"}}),
    _tool_result("toolu_1", "Wrote 2 bytes to a"),
    _tool_result("toolu_2", "denied", is_error=True),
    _assistant("msg_2", {"type": "text", "text": "Done."}, prompt=300),
    _line(
        {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "result": "Done.",
            "session_id": SESSION,
            "usage": {
                "input_tokens": 380, "output_tokens": 50, "cache_read_input_tokens": 10,
                "cache_creation_input_tokens": 20,
            },
            "total_cost_usd": 0.0123,
        }
    ),
]


def _assemble(parser: Any, lines: list[str]) -> tuple[TurnAssembler, list[TurnDraft], list[int]]:
    turns: list[TurnDraft] = []
    seen_at: list[int] = []
    assembler = TurnAssembler(turns.append, lambda name: name.removeprefix("mcp__orchestra__"))
    for index, line in enumerate(lines):
        before = len(turns)
        for event in parser.parse(line):
            assembler.feed(event)
        seen_at.extend([index] * (len(turns) - before))
    assembler.close()
    return assembler, turns, seen_at


def test_a_claude_response_and_its_tool_results_make_one_turn_reported_as_soon_as_the_results_are_in() -> (
    None
):
    assembler, turns, seen_at = _assemble(ClaudeStreamParser(), CLAUDE_RUN)

    assert [turn.messages()[0]["content"] for turn in turns] == ["Writing.", "Done."]
    first = turns[0]
    assert [(call.name, call.result, call.error) for call in first.tool_calls()] == [
        ("project__write-file", "Wrote 2 bytes to a", None),
        ("Read", None, "denied"),
    ]
    assert first.used_native_tools and not turns[1].used_native_tools
    assert seen_at == [6, 8]  # the first turn right after its last tool result, the second at the result
    assert isinstance(assembler.started, AgentStarted)
    assert assembler.started.mcp_servers == {"orchestra": "connected"}
    # prompt tokens count the cached ones; the cache reads and writes are kept apart, and the agent's own cost
    assert assembler.result == AgentResult("Done.", False, "success", TokenUsage(410, 50, 10, 20), cost_usd=0.0123)


def test_the_final_claude_turn_settles_the_token_count_so_turns_add_up_to_the_run_total() -> None:
    assembler, turns, _ = _assemble(ClaudeStreamParser(), CLAUDE_RUN)
    total = turns[0].usage + turns[1].usage
    assert total == assembler.usage == TokenUsage(410, 50, 10, 20)


@pytest.mark.parametrize("cost", [-1, "0.5", float("inf"), 1e300, True, None])
def test_a_cost_claude_could_not_have_run_up_is_ignored(cost: object) -> None:
    (event,) = ClaudeStreamParser().parse(_line({"type": "result", "subtype": "success", "total_cost_usd": cost}))
    assert isinstance(event, AgentResult) and event.cost_usd is None


def test_a_claude_error_result_is_a_failed_result_with_its_errors() -> None:
    line = _line(
        {"type": "result", "subtype": "error_during_execution", "is_error": True, "errors": ["API 500"]}
    )
    (event,) = ClaudeStreamParser().parse(line)
    assert event == AgentResult("", True, "API 500", None)


def _codex_item(kind: str, item: dict[str, Any]) -> str:
    return _line({"type": kind, "item": item})


CODEX_RUN = [
    _line({"type": "thread.started", "thread_id": "01a2"}),
    _codex_item("item.completed", {"id": "item_0", "type": "error", "message": "Model metadata not found"}),
    _line({"type": "turn.started"}),
    _codex_item("item.completed", {"id": "item_1", "type": "agent_message", "text": "Writing."}),
    _codex_item(
        "item.started",
        {
            "id": "item_2",
            "type": "mcp_tool_call",
            "server": "orchestra",
            "tool": "project__write-file",
            "arguments": {"path": "a.txt"},
            "result": None,
            "error": None,
            "status": "in_progress",
        },
    ),
    _codex_item(
        "item.completed",
        {
            "id": "item_2",
            "type": "mcp_tool_call",
            "server": "orchestra",
            "tool": "project__write-file",
            "arguments": {"path": "a.txt"},
            "result": {"content": [{"type": "text", "text": "Wrote 2 bytes"}]},
            "error": None,
            "status": "completed",
        },
    ),
    _codex_item(
        "item.completed",
        {
            "id": "item_3",
            "type": "command_execution",
            "command": "touch b",
            "aggregated_output": "",
            "exit_code": 0,
            "status": "completed",
        },
    ),
    _codex_item("item.completed", {"id": "item_4", "type": "agent_message", "text": "Done."}),
    _line(
        {
            "type": "turn.completed",
            "usage": {"input_tokens": 2000, "cached_input_tokens": 1500, "output_tokens": 145},
        }
    ),
]


def test_codex_items_are_split_into_turns_where_tools_finished() -> None:
    assembler, turns, _ = _assemble(CodexStreamParser(), CODEX_RUN)

    assert [[call.name for call in turn.tool_calls()] for turn in turns] == [
        ["project__write-file"],
        ["command_execution"],
        [],
    ]
    assert turns[0].tool_calls()[0].result == "Wrote 2 bytes"
    assert turns[1].used_native_tools and turns[1].tool_calls()[0].args == {"command": "touch b"}
    assert turns[2].messages()[0]["content"] == "Done."
    assert assembler.result is not None and assembler.result.text == "Done."
    assert assembler.usage == TokenUsage(2000, 145, cache_read_tokens=1500)  # OpenAI counts cached input in the input


def test_a_codex_mcp_error_and_a_failed_turn_are_reported_as_errors() -> None:
    lines = [
        _codex_item(
            "item.completed",
            {
                "id": "i",
                "type": "mcp_tool_call",
                "server": "orchestra",
                "tool": "t",
                "arguments": '{"a": 1}',
                "result": None,
                "error": {"message": "path refused"},
                "status": "failed",
            },
        ),
        _line({"type": "turn.failed", "error": {"message": "stream disconnected"}}),
    ]
    assembler, turns, _ = _assemble(CodexStreamParser(), lines)
    (call,) = turns[0].tool_calls()
    assert (call.args, call.error) == ({"a": 1}, "path refused")
    assert assembler.result == AgentResult("stream disconnected", True, "stream disconnected", None)


@given(st.lists(st.text(max_size=200), max_size=30))
def test_any_output_is_read_without_raising(lines: list[str]) -> None:
    for parser in (ClaudeStreamParser(), CodexStreamParser()):
        _assemble(parser, [*lines, *CLAUDE_RUN[:3], *lines])


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=20),
        lambda inner: (
            st.lists(inner, max_size=4)
            | st.dictionaries(
                st.sampled_from(
                    [
                        "type",
                        "item",
                        "message",
                        "content",
                        "id",
                        "usage",
                        "result",
                        "error",
                        "subtype",
                        "mcp_servers",
                        "tool_use_id",
                        "name",
                        "input",
                        "text",
                        "status",
                        "arguments",
                    ]
                ),
                inner,
                max_size=5,
            )
        ),
        max_leaves=20,
    )
)
def test_json_of_any_shape_is_read_without_raising(value: Any) -> None:
    line = json.dumps(value) + "\n"
    for parser in (ClaudeStreamParser(), CodexStreamParser()):
        _assemble(
            parser,
            [
                line,
                _line({"type": "assistant", "message": value}),
                _line({"type": "item.completed", "item": value}),
            ],
        )


def test_claude_says_when_it_went_on_with_its_fallback_model_and_which_model_answered() -> None:
    message = {"id": "msg_9", "role": "assistant", "model": "backup-y", "content": [{"type": "text", "text": "Hi."}]}
    lines = [
        _line({"type": "system", "subtype": "model_fallback", "content": "Switched to backup-y due to high demand"}),
        _line({"type": "assistant", "message": message, "session_id": SESSION}),
    ]
    parser = ClaudeStreamParser()
    events = [event for line in lines for event in parser.parse(line)]
    assert events[:2] == [ModelSwitched("Switched to backup-y due to high demand"), ModelCall("msg_9", "backup-y")]
    drafts: list[TurnDraft] = []
    assembler = TurnAssembler(drafts.append, lambda name: name)
    for event in events:
        assembler.feed(event)
    assembler.close()
    assert [(draft.model, draft.text) for draft in drafts] == [("backup-y", ["Hi."])]


def test_each_tool_call_is_timed_from_its_use_to_its_result_for_traces() -> None:
    import time
    from datetime import UTC, datetime

    turns: list[TurnDraft] = []
    assembler = TurnAssembler(turns.append, lambda name: name.removeprefix("mcp__orchestra__"))
    parser = ClaudeStreamParser()
    before = datetime.now(UTC)
    for event in parser.parse(CLAUDE_RUN[3]):  # the tool_use of toolu_1
        assembler.feed(event)
    time.sleep(0.05)
    for line in CLAUDE_RUN[4:]:
        for event in parser.parse(line):
            assembler.feed(event)
    written = turns[0].tool_calls()[0]
    assert written.call_id == "toolu_1" and written.started_at is not None and written.duration_s is not None
    assert before <= written.started_at <= datetime.now(UTC)
    assert 0.05 <= written.duration_s < 5
