"""The scripted model streams a cassette reply as providers do (text word by word, tool call chunks, usage on the
last chunk), and the chunks added up are the message `invoke` gives, for any reply (hypothesis)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage

from orchestra_adapters.backends.agent_graph import streamed_reply
from orchestra_adapters.llm.cassette import (
    Cassette,
    CassetteError,
    ScriptedReply,
    ScriptedToolCall,
    ScriptedUsage,
    parse_cassette,
)
from orchestra_adapters.llm.scripted import CassettePlayer, ScriptedChatModel, ScriptedProviderError
from orchestra_core.model.activity import Activity

PATH = Path("/cassettes/cassette.yaml")
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)
TOOL_CALLS = st.builds(
    ScriptedToolCall,
    st.sampled_from(["project:write-file", "project:read-file", "report_outcome"]),
    st.dictionaries(st.text(max_size=8), JSON_VALUES, max_size=3),
)
USAGES = st.none() | st.builds(
    lambda i, o, r: ScriptedUsage(i + r, o, r, 0), st.integers(0, 10**5), st.integers(0, 10**5), st.integers(0, 10**5)
)
REPLIES = st.builds(ScriptedReply, st.text(max_size=80), st.lists(TOOL_CALLS, max_size=3), usage=USAGES)


def model(reply: ScriptedReply, **cassette: Any) -> ScriptedChatModel:
    player = CassettePlayer(Cassette(PATH, {"implement": (reply,)}, **cassette))
    return ScriptedChatModel(player=player, node_id="implement", model_name="scripted-sonnet")


def without_ids(message: Any) -> dict[str, Any]:
    fields = message.model_dump(exclude={"id"})
    fields["tool_calls"] = [{**call, "id": None} for call in fields["tool_calls"]]
    return fields


@settings(max_examples=60, deadline=None)
@given(REPLIES)
def test_the_streamed_chunks_add_up_to_the_invoked_message(reply: ScriptedReply) -> None:
    prompt = [HumanMessage("Do it.")]
    invoked = model(reply).invoke(prompt)
    heard: list[Activity] = []
    streamed = streamed_reply(model(reply), prompt, heard.append)
    assert isinstance(streamed, AIMessage) and not isinstance(streamed, AIMessageChunk)
    assert without_ids(streamed) == without_ids(invoked)
    assert "".join(activity.text for activity in heard) == reply.content


def test_text_comes_word_by_word_then_the_tool_calls_then_the_usage() -> None:
    reply = ScriptedReply(
        "Two  words\nthree", [ScriptedToolCall("project:read-file", {"path": "a.md"})], usage=ScriptedUsage(50, 7)
    )
    chunks = list(model(reply).stream([HumanMessage("Go.")]))
    assert [chunk.content for chunk in chunks[:3]] == ["Two", "  words", "\nthree"]
    assert [chunk.tool_call_chunks[0]["name"] for chunk in chunks if chunk.tool_call_chunks] == ["project__read-file"]
    assert [chunk.usage_metadata for chunk in chunks if chunk.usage_metadata] == [
        {"input_tokens": 50, "output_tokens": 7, "total_tokens": 57,
         "input_token_details": {"cache_read": 0, "cache_creation": 0}}
    ]  # fmt: skip
    (ends,) = [index for index, chunk in enumerate(chunks) if chunk.response_metadata.get("model_name")]
    assert chunks[ends].usage_metadata and ends > 3  # after the text and the tool call


def test_a_scripted_error_is_raised_before_any_chunk() -> None:
    chunks: list[Any] = []
    with pytest.raises(ScriptedProviderError, match="overloaded"):
        chunks.extend(model(ScriptedReply(error="overloaded", status_code=529)).stream([HumanMessage("Go.")]))
    assert chunks == []


def test_chunk_delay_paces_the_words() -> None:
    started = time.monotonic()
    list(model(ScriptedReply("one two three four"), chunk_delay_s=0.05).stream([HumanMessage("Go.")]))
    assert time.monotonic() - started >= 0.15  # three pauses between four words


def test_a_held_reply_waits_after_its_first_word_until_its_file_exists(tmp_path: Path) -> None:
    player = CassettePlayer(Cassette(tmp_path / "c.yaml", {"n": (ScriptedReply("first then rest", hold="gate"),)}))
    stream = ScriptedChatModel(player=player, node_id="n").stream([HumanMessage("Go.")])
    assert next(stream).content == "first"
    started = time.monotonic()
    (tmp_path / "gate").touch()
    assert [chunk.content for chunk in stream][:2] == [" then", " rest"]
    assert time.monotonic() - started < 5


def test_the_cassette_reads_chunk_delay_and_hold_and_names_bad_values() -> None:
    cassette = parse_cassette("chunk_delay: 0.25\nnodes:\n  n:\n    - {content: hi there, hold: gate}\n", PATH)
    assert cassette.chunk_delay_s == 0.25 and cassette.nodes["n"][0].hold == "gate"
    with pytest.raises(CassetteError, match=r"chunk_delay.*seconds from 0 to 600"):
        parse_cassette("chunk_delay: -1\ndefault: hi\n", PATH)
    with pytest.raises(CassetteError, match=r"nodes\.n\[0\]\.hold.*expected a string"):
        parse_cassette("nodes:\n  n:\n    - {content: hi, hold: [1]}\n", PATH)
