"""ScriptedChatModel: a real LangChain chat model playing a cassette, one shared position per run."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage

from orchestra_adapters.llm.cassette import CassetteError, parse_cassette
from orchestra_adapters.llm.scripted import CassettePlayer, ScriptedChatModel, ScriptedProviderError

CASSETTE = """\
nodes:
  implement:
    - content: "I'll add hello.py"
      tool_calls:
        - {name: "project:write-file", args: {path: hello.py, content: "print('hello')\\n"}}
        - {name: "project:read-file", args: {path: README.md}}
    - content: "Done."
  review:
    - {error: "overloaded", status_code: 529}
    - "LGTM"
commit_messages:
  - "Add hello world script\\n\\nPrints a greeting."
"""

WRITE_TOOL = {
    "type": "function",
    "function": {
        "name": "project__write-file",
        "description": "Write a file.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
    },
}


def _player(text: str = CASSETTE, default: str | None = None) -> CassettePlayer:
    if default is not None:
        text += f"default: {default!r}\n"
    return CassettePlayer(parse_cassette(text, Path("cassette.yaml")))


def test_is_a_langchain_chat_model_that_binds_tools_and_plays_in_order() -> None:
    model = ScriptedChatModel(player=_player(), node_id="implement", model_name="claude-test")
    assert isinstance(model, BaseChatModel)
    bound = model.bind_tools([WRITE_TOOL])
    first = bound.invoke([HumanMessage("Add a hello script")])
    assert isinstance(first, AIMessage)
    assert first.content == "I'll add hello.py"
    assert [call["name"] for call in first.tool_calls] == ["project__write-file", "project__read-file"]
    assert first.tool_calls[0]["args"] == {"path": "hello.py", "content": "print('hello')\n"}
    ids = [call["id"] for call in first.tool_calls]
    assert all(i.startswith("call_") for i in ids) and len(set(ids)) == 2
    assert first.response_metadata == {"model_name": "claude-test", "finish_reason": "tool_calls"}
    second = bound.invoke([HumanMessage("Add a hello script"), first])
    assert (second.content, second.tool_calls) == ("Done.", [])
    assert second.response_metadata["finish_reason"] == "stop"


def test_reports_plausible_token_usage() -> None:
    model = ScriptedChatModel(player=_player(default="ok"), node_id="other")
    short = model.invoke([HumanMessage("hi")]).usage_metadata
    long = model.invoke([HumanMessage("hi " * 400)]).usage_metadata
    with_tools = model.bind_tools([WRITE_TOOL]).invoke([HumanMessage("hi")]).usage_metadata
    assert short is not None and long is not None and with_tools is not None
    assert short["input_tokens"] >= 1 and short["output_tokens"] >= 1
    assert long["input_tokens"] > short["input_tokens"] + 250  # about four characters a token
    assert with_tools["input_tokens"] > short["input_tokens"]  # tool definitions count as prompt
    assert long["total_tokens"] == long["input_tokens"] + long["output_tokens"]


def test_nodes_share_one_position_across_model_instances() -> None:
    player = _player(default="fallback")
    ScriptedChatModel(player=player, node_id="implement").invoke("go")
    again = ScriptedChatModel(player=player, node_id="implement").invoke("go")  # the node's second visit
    assert again.content == "Done."
    assert ScriptedChatModel(player=player, node_id="implement").invoke("go").content == "fallback"
    assert player.calls("nodes.implement") == 3
    assert player.calls("nodes.review") == 0


def test_a_continued_conversation_goes_on_after_the_replies_it_holds() -> None:
    player = _player("continue_conversations: true\n" + CASSETTE, default="fallback")
    first = ScriptedChatModel(player=player, node_id="implement").invoke("go")
    assert first.response_metadata["scripted_node"] == "implement"
    # A resumed run (a new player) continues the saved conversation: the next reply is the node's second.
    resumed = _player("continue_conversations: true\n" + CASSETTE, default="fallback")
    held = [HumanMessage("go"), first, HumanMessage("and now?")]
    assert ScriptedChatModel(player=resumed, node_id="implement").invoke(held).content == "Done."
    fresh = _player("continue_conversations: true\n" + CASSETTE, default="fallback")
    other = AIMessage("LGTM", response_metadata={"scripted_node": "review"})
    assert ScriptedChatModel(player=fresh, node_id="implement").invoke([other]).content == "I'll add hello.py"


def test_without_continue_conversations_a_resumed_conversation_starts_the_list_over() -> None:
    first = ScriptedChatModel(player=_player(), node_id="implement").invoke("go")
    assert "scripted_node" not in first.response_metadata
    held = [HumanMessage("go"), first, HumanMessage("and now?")]
    assert ScriptedChatModel(player=_player(), node_id="implement").invoke(held).content == "I'll add hello.py"


def test_commit_message_calls_use_their_own_list() -> None:
    player = _player(default="Done.")
    model = ScriptedChatModel(player=player, node_id="implement", purpose="commit_message")
    assert model.invoke("diff").content == "Add hello world script\n\nPrints a greeting."
    assert model.invoke("diff").content == "Done."
    assert player.calls("nodes.implement") == 0


def test_error_entries_raise_like_a_provider_sdk() -> None:
    model = ScriptedChatModel(player=_player(), node_id="review")
    with pytest.raises(ScriptedProviderError, match="overloaded") as caught:
        model.invoke("review it")
    assert caught.value.status_code == 529
    assert model.invoke("review it").content == "LGTM"


def test_running_out_without_default_names_the_cassette_and_node() -> None:
    model = ScriptedChatModel(player=_player(), node_id="review")
    model.batch(["a", "b"], return_exceptions=True)
    with pytest.raises(
        CassetteError, match=r"cassette.yaml: nodes.review: no reply left for call 3 \(2 scripted\)"
    ):
        model.invoke("c")


def test_concurrent_calls_each_get_a_distinct_reply() -> None:
    text = "nodes:\n  n:\n" + "".join(f"    - r{i}\n" for i in range(40))
    player = _player(text)
    answers: list[str] = []

    def call() -> None:
        for _ in range(10):
            answers.append(ScriptedChatModel(player=player, node_id="n").invoke("x").content)

    threads = [threading.Thread(target=call) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(answers) == sorted(f"r{i}" for i in range(40))
