"""Cassette parsing: the documented shape, shorthand replies, and errors that name the file, line and key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from orchestra_adapters.llm.cassette import (
    CassetteError,
    ScriptedReply,
    ScriptedToolCall,
    load_cassette,
    parse_cassette,
)
from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.settings import ConfigError
from orchestra_core.ports.chat_models import ProviderConfigError

PATH = Path("cassette.yaml")

EXAMPLE = """\
nodes:
  implement:                  # that node's model calls, in order
    - content: "I'll add hello.py"
      tool_calls:
        - {name: "project:write-file", args: {path: hello.py, content: "print('hello')\\n"}}
    - content: "Done."
commit_messages:              # answers to commit-message calls, in order
  - "Add hello world script\\n\\nPrints a greeting."
default: "Done."              # any call with nothing left to play
"""


def test_documented_example_parses() -> None:
    cassette = parse_cassette(EXAMPLE, PATH)
    assert cassette.nodes["implement"] == (
        ScriptedReply(
            "I'll add hello.py",
            (ScriptedToolCall("project:write-file", {"path": "hello.py", "content": "print('hello')\n"}),),
        ),
        ScriptedReply("Done."),
    )
    assert cassette.commit_messages == ("Add hello world script\n\nPrints a greeting.",)
    assert cassette.default == "Done."
    assert cassette.path == PATH


def test_string_entries_are_plain_replies_and_errors_carry_status_codes() -> None:
    cassette = parse_cassette(
        "nodes:\n  review:\n    - Looks fine.\n    - {error: rate limited, status_code: 429}\n    - error: boom\n",
        PATH,
    )
    assert cassette.nodes["review"] == (
        ScriptedReply("Looks fine."),
        ScriptedReply(error="rate limited", status_code=429),
        ScriptedReply(error="boom"),
    )
    assert cassette.default is None
    assert cassette.commit_messages == ()


def test_tool_arguments_are_plain_json_values() -> None:
    cassette = parse_cassette(
        "nodes:\n  a:\n    - tool_calls:\n        - name: t\n          args: {items: [1, {k: v}], flag: true}\n",
        PATH,
    )
    args = cassette.nodes["a"][0].tool_calls[0].args
    assert json.loads(json.dumps(dict(args))) == {"items": [1, {"k": "v"}], "flag": True}
    assert type(args["items"]) is list and type(args["items"][1]) is dict


@pytest.mark.parametrize(
    ("text", "line", "key", "detail"),
    [
        ("nodes: {}\nextra: 1\n", 2, "extra", "unknown key 'extra'"),
        ("nodes:\n  a:\n    - content: hi\n      tools: []\n", 4, "nodes.a[0].tools", "unknown key 'tools'"),
        (
            "nodes:\n  a:\n    - tool_calls:\n        - args: {}\n",
            4,
            "nodes.a[0].tool_calls[0]",
            "needs a name",
        ),
        ("nodes:\n  a: hello\n", 2, "nodes.a", "expected a list"),
        ("nodes:\n  a:\n    - content: [1]\n", 3, "nodes.a[0].content", "expected a string"),
        ("nodes:\n  a:\n    - 42\n", 3, "nodes.a[0]", "expected a mapping"),
        ("commit_messages:\n  - ok\n  - {a: 1}\n", 3, "commit_messages[1].a", "unknown key 'a'"),
        ("commit_messages:\n  - ok\n  - [1]\n", 3, "commit_messages[1]", "expected a string or a mapping"),
        ("nodes:\n  a:\n    - {content: x, usage: {input_tokens: -1}}\n", 3, "nodes.a[0].usage.input_tokens", "0 or more"),
        ("nodes:\n  a:\n    - {usage: {input_tokens: 1, cache_read_tokens: 2}}\n", 3, "nodes.a[0].usage", "parts of input_tokens"),
        ("nodes:\n  a:\n    - {usage: {input: 1}}\n", 3, "nodes.a[0].usage.input", "unknown key 'input'"),
        ("default: 3\n", 1, "default", "expected a string"),
        ("continue_conversations: yes\n", 1, "continue_conversations", "expected true or false"),
        ("nodes:\n  a:\n    - {error: x, status_code: often}\n", 3, "nodes.a[0].status_code", "an integer"),
        (
            "nodes:\n  a:\n    - {content: x, status_code: 500}\n",
            3,
            "nodes.a[0].status_code",
            "needs an error",
        ),
        (
            "nodes:\n  a:\n    - tool_calls:\n        - {name: t, args: [1]}\n",
            4,
            "nodes.a[0].tool_calls[0].args",
            "mapping",
        ),
    ],
)
def test_shape_errors_name_line_and_key(text: str, line: int, key: str, detail: str) -> None:
    with pytest.raises(CassetteError) as caught:
        parse_cassette(text, PATH)
    error = caught.value
    assert (error.line, error.key) == (line, key)
    assert detail in error.detail
    assert str(error).startswith(f"cassette.yaml:{line}: {key}: ")


def test_yaml_syntax_error_names_the_line() -> None:
    with pytest.raises(CassetteError, match=r"cassette.yaml:2: not valid YAML") as caught:
        parse_cassette("default: ok\nnodes: {a: [1}\ncommit_messages: []\n", PATH)
    assert caught.value.line == 2


def test_duplicate_keys_are_errors() -> None:
    with pytest.raises(CassetteError, match="not valid YAML"):
        parse_cassette("default: a\ndefault: b\n", PATH)


def test_empty_and_non_mapping_documents_are_errors() -> None:
    with pytest.raises(CassetteError, match="empty"):
        parse_cassette("# nothing\n", PATH)
    with pytest.raises(CassetteError, match="expected a mapping"):
        parse_cassette("- a\n", PATH)


def test_missing_file_is_a_provider_config_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    with pytest.raises(CassetteError, match=r"nope.yaml: cannot read the cassette") as caught:
        load_cassette(missing)
    assert isinstance(caught.value, ConfigError)  # a bad cassette is bad configuration...
    assert isinstance(caught.value, ProviderConfigError)  # ...of the scripted provider
    assert isinstance(caught.value, OrchestraError)


def test_load_reads_the_file(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(EXAMPLE, encoding="utf-8")
    assert load_cassette(path).nodes["implement"][1].content == "Done."


_text = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Co", "Cn")), max_size=30)  # YAML-printable
_json = st.recursive(
    st.none() | st.booleans() | st.integers(-1000, 1000) | _text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=8,
)
_reply = st.builds(
    ScriptedReply,
    content=_text,
    tool_calls=st.lists(
        st.builds(ScriptedToolCall, name=_text.filter(bool), args=st.dictionaries(_text, _json, max_size=3)),
        max_size=2,
    ),
)
_node_id = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,10}", fullmatch=True)


@given(
    nodes=st.dictionaries(_node_id, st.lists(_reply, max_size=3), max_size=3),
    commit_messages=st.lists(_text, max_size=3),
    default=st.none() | _text,
)
def test_any_cassette_written_as_json_round_trips(nodes, commit_messages, default) -> None:
    document = {
        "nodes": {
            node: [
                {
                    "content": r.content,
                    "tool_calls": [{"name": c.name, "args": dict(c.args)} for c in r.tool_calls],
                }
                for r in replies
            ]
            for node, replies in nodes.items()
        },
        "commit_messages": commit_messages,
    }
    if default is not None:
        document["default"] = default
    cassette = parse_cassette(json.dumps(document, ensure_ascii=False), PATH)  # JSON is YAML
    assert dict(cassette.nodes) == {node: tuple(replies) for node, replies in nodes.items()}
    assert cassette.commit_messages == tuple(commit_messages)
    assert cassette.default == default
