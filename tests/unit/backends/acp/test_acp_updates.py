"""ACP session updates read into turns: one model response with its tool calls and their results is one turn."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from orchestra_adapters.backends.acp.updates import UpdateMapper
from orchestra_adapters.backends.cli_agent.turns import TurnAssembler, TurnDraft


def ours(call: Mapping[str, Any]) -> str | None:
    """Calls titled `mcp__orchestra__<tool>` are Orchestra's (`project__write-file` -> `project:write-file`)."""
    title = str(call.get("title") or "")
    prefix = "mcp__orchestra__"
    return title.removeprefix(prefix).replace("__", ":") if title.startswith(prefix) else None


def turns_of(updates: list[dict[str, Any]]) -> tuple[list[TurnDraft], UpdateMapper]:
    drafts: list[TurnDraft] = []
    mapper = UpdateMapper(ours)
    assembler = TurnAssembler(drafts.append, lambda name: name)
    for update in updates:
        for event in mapper.map(update):
            assembler.feed(event)
    assembler.close()
    return drafts, mapper


def text(words: str, kind: str = "agent_message_chunk") -> dict[str, Any]:
    return {"sessionUpdate": kind, "content": {"type": "text", "text": words}}


def call(
    call_id: str, title: str, kind: str = "other", status: str = "pending", **more: Any
) -> dict[str, Any]:
    return {
        "sessionUpdate": "tool_call",
        "toolCallId": call_id,
        "title": title,
        "kind": kind,
        "status": status,
        **more,
    }


def done(call_id: str, result: str = "ok", status: str = "completed", **more: Any) -> dict[str, Any]:
    content = [{"type": "content", "content": {"type": "text", "text": result}}]
    return {
        "sessionUpdate": "tool_call_update",
        "toolCallId": call_id,
        "status": status,
        "content": content,
        **more,
    }


def test_a_response_its_calls_and_their_results_make_one_turn_and_text_after_them_the_next() -> None:
    write = {"path": "a.py", "content": "A = 1\n"}
    drafts, mapper = turns_of(
        [
            text("Let me ", "agent_thought_chunk"),
            text("I will write "),
            text("a."),
            call("c1", "mcp__orchestra__project__write-file", rawInput=write),
            done("c1", "Wrote 6 bytes"),
            text("Done."),
        ]
    )
    assert [d.text for d in drafts] == [["I will write ", "a."], ["Done."]]
    [first, last] = drafts
    [tool] = first.tool_calls()
    assert (tool.name, dict(tool.args), tool.result) == ("project:write-file", write, "Wrote 6 bytes")
    assert not first.used_native_tools and last.tool_calls() == []
    assert mapper.reply == "Done."


def test_a_thought_after_the_tools_begins_the_next_response() -> None:
    drafts, _ = turns_of(
        [
            call("c1", "Read", "read"),
            done("c1"),
            text("hmm", "agent_thought_chunk"),
            call("c2", "Read", "read"),
            done("c2"),
        ]
    )
    assert [[c.call_id for c in d.tool_calls()] for d in drafts] == [["c1"], ["c2"]]


def test_parallel_calls_stay_in_one_turn_until_the_last_finishes_and_a_failure_is_an_error() -> None:
    drafts, _ = turns_of(
        [
            call("a", "Shell", "execute"),
            call("b", "Read", "read"),
            done("b"),
            done("a", "exit 1", status="failed"),
            text("next"),
        ]
    )
    assert [[c.call_id for c in d.tool_calls()] for d in drafts] == [["a", "b"], []]
    calls = {c.call_id: c for c in drafts[0].tool_calls()}
    assert calls["a"].error == "exit 1" and calls["b"].result == "ok"
    assert drafts[0].used_native_tools  # a shell may have written past Orchestra


def test_reading_tools_are_not_native_writers_and_a_call_may_finish_as_it_starts() -> None:
    drafts, _ = turns_of([call("r", "Read", "read", status="completed", rawOutput={"lines": 3})])
    [draft] = drafts
    [read] = draft.tool_calls()
    assert read.result == '{"lines": 3}' and not draft.used_native_tools


def test_input_given_after_the_start_completes_the_call() -> None:
    late = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c1",
        "status": "in_progress",
        "rawInput": {"path": "x"},
    }
    drafts, _ = turns_of([call("c1", "mcp__orchestra__project__read-file"), late, done("c1")])
    [tool] = drafts[0].tool_calls()
    assert dict(tool.args) == {"path": "x"} and tool.result == "ok"


def test_diffs_and_terminals_are_named_in_the_result() -> None:
    diff = {"type": "diff", "path": "/w/a.py", "oldText": "", "newText": "x"}
    update = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "e",
        "status": "completed",
        "content": [diff],
    }
    drafts, _ = turns_of([call("e", "Edit", "edit"), update])
    assert drafts[0].tool_calls()[0].result == "changed /w/a.py"


def test_plan_and_usage_in_us_dollars_are_kept_and_other_currencies_ignored() -> None:
    _, mapper = turns_of(
        [
            {
                "sessionUpdate": "plan",
                "entries": [{"content": "write a", "status": "pending", "priority": "high"}],
            },
            {
                "sessionUpdate": "usage_update",
                "used": 10,
                "size": 100,
                "cost": {"amount": 0.5, "currency": "USD"},
            },
            {
                "sessionUpdate": "usage_update",
                "used": 10,
                "size": 100,
                "cost": {"amount": 9, "currency": "EUR"},
            },
        ]
    )
    assert mapper.plan == [{"content": "write a", "status": "pending", "priority": "high"}]
    assert mapper.cost_usd == 0.5


def test_updates_of_other_kinds_and_calls_without_an_id_are_ignored() -> None:
    drafts, _ = turns_of(
        [
            {"sessionUpdate": "available_commands_update"},
            {"sessionUpdate": "tool_call", "title": "x"},
            text("hi"),
        ]
    )
    assert [d.text for d in drafts] == [["hi"]]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=20,
)
kinds = st.sampled_from(
    [
        "agent_message_chunk",
        "agent_thought_chunk",
        "tool_call",
        "tool_call_update",
        "plan",
        "usage_update",
        "x",
    ]
)


@given(
    st.lists(
        st.builds(
            lambda kind, rest: {**rest, "sessionUpdate": kind},
            kinds,
            st.dictionaries(
                st.sampled_from(
                    [
                        "toolCallId",
                        "status",
                        "content",
                        "rawInput",
                        "rawOutput",
                        "entries",
                        "cost",
                        "title",
                        "kind",
                        "locations",
                    ]
                ),
                json_values,
            ),
        ),
        max_size=20,
    )
)
def test_any_updates_of_any_shape_map_without_failing(updates: list[dict[str, Any]]) -> None:
    drafts, _ = turns_of(updates)
    assert all(isinstance(d, TurnDraft) for d in drafts)
