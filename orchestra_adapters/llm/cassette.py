"""Cassettes for the scripted provider: the YAML file of replies, parsed and checked with line numbers."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from attrs import field, frozen

from orchestra_core.model.immutable import frozen_map, str_tuple
from orchestra_core.model.input_files import MAX_CASSETTE_BYTES, InputFileError, read_text_file
from orchestra_core.model.settings import ConfigError, ConfigProblem
from orchestra_core.ports.chat_models import ProviderConfigError

_TOP_KEYS = ("nodes", "commit_messages", "default", "delay", "chunk_delay", "continue_conversations")
_REPLY_KEYS = ("content", "tool_calls", "error", "status_code", "usage", "hold")
_COMMIT_MESSAGE_KEYS = ("content", "usage")
_USAGE_KEYS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
_TOOL_CALL_KEYS = ("name", "args")


class CassetteError(ConfigError, ProviderConfigError):
    """A cassette file is unreadable or malformed; the message names the file, line and key."""

    def __init__(self, path: Path, detail: str, *, line: int | None = None, key: str = "") -> None:
        self.path = path
        super().__init__(ConfigProblem(detail, str(path), line, key or None))


@frozen
class ScriptedToolCall:
    """A tool call the scripted model makes; `name` is the Orchestra name (`repo:tool`)."""

    name: str
    args: Mapping[str, Any] = field(factory=dict, converter=frozen_map)


def _tool_calls(items: Iterable[ScriptedToolCall]) -> tuple[ScriptedToolCall, ...]:
    return tuple(items)


@frozen
class ScriptedUsage:
    """The tokens a scripted reply reports instead of the estimate: `input_tokens` counts every input token, the
    cached ones (`cache_read_tokens`, `cache_write_tokens`) included, as providers report them."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0


@frozen
class ScriptedReply:
    """One model call's answer: text and tool calls, or a provider error to raise; `usage`: its exact tokens."""

    content: str = ""
    tool_calls: tuple[ScriptedToolCall, ...] = field(default=(), converter=_tool_calls)
    error: str | None = None
    status_code: int | None = None
    usage: ScriptedUsage | None = None
    hold: str | None = None  # streamed, the reply waits after its first word until this file exists


@frozen
class Cassette:
    """A parsed cassette: replies per node (in call order), commit-message answers and the fallback.

    `continue_conversations`: a conversation a run continues (resume or replay at an agent turn, an
    interactive node re-entered) plays its node's list after the replies it already holds.
    """

    path: Path
    nodes: Mapping[str, tuple[ScriptedReply, ...]] = field(
        factory=dict, converter=frozen_map
    )
    commit_messages: tuple[str, ...] = field(default=(), converter=str_tuple)
    default: str | None = None
    delay_s: float = 0.0  # how long the model takes to answer each call (for benchmarks that model latency)
    continue_conversations: bool = False
    commit_message_usage: Mapping[int, ScriptedUsage] = field(factory=dict, converter=frozen_map)
    chunk_delay_s: float = 0.0  # streamed, the pause between one word of a reply and the next

    def commit_message_replies(self) -> tuple[ScriptedReply, ...]:
        """The answers to commit-message calls, in order, with the usage an entry gives."""
        return tuple(
            ScriptedReply(message, usage=self.commit_message_usage.get(index))
            for index, message in enumerate(self.commit_messages)
        )


def load_cassette(path: Path) -> Cassette:
    """Read and check a cassette file.

    Raises:
        CassetteError: The file is missing, is not YAML, or does not have the cassette's shape.
    """
    try:
        text = read_text_file(path, limit=MAX_CASSETTE_BYTES)
    except InputFileError as error:
        raise CassetteError(path, f"cannot read the cassette: {error.detail}", line=error.line) from None
    return parse_cassette(text, path)


def parse_cassette(text: str, path: Path) -> Cassette:
    """Parse cassette text (`path` is only used in messages).

    Raises:
        CassetteError: The text is not YAML or does not have the cassette's shape.
    """
    from orchestra_adapters.config.yaml_source import load_yaml

    try:
        document = load_yaml(text, str(path))
    except ConfigError as error:
        detail = error.detail.removeprefix("YAML syntax error: ")
        raise CassetteError(path, f"not valid YAML: {detail}", line=error.line) from None
    if document is None:
        raise CassetteError(path, "the cassette is empty; give nodes:, commit_messages: or default:")
    return _Reader(path).cassette(document)


class _Reader:
    """Walks the loaded YAML, turning shape errors into CassetteErrors with the offending line."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, detail: str, key: str, line: int | None) -> CassetteError:
        return CassetteError(self.path, detail, line=None if line is None else line + 1, key=key)

    def mapping(self, value: Any, key: str, line: int | None, allowed: tuple[str, ...] | None) -> Mapping:
        if not isinstance(value, Mapping):
            raise self.fail(f"expected a mapping, got {_kind(value)}", key, line)
        for name in value:
            if allowed is not None and name not in allowed:
                raise self.fail(
                    f"unknown key {name!r} (expected one of: {', '.join(allowed)})",
                    _join(key, str(name)),
                    _key_line(value, name),
                )
        return value

    def text(self, value: Any, key: str, line: int | None) -> str:
        if not isinstance(value, str):
            raise self.fail(f"expected a string, got {_kind(value)}", key, line)
        return value

    def sequence(self, value: Any, key: str, line: int | None) -> list:
        if not isinstance(value, list):
            raise self.fail(f"expected a list, got {_kind(value)}", key, line)
        return value

    def cassette(self, document: Any) -> Cassette:
        top = self.mapping(document, "", _own_line(document), _TOP_KEYS)
        nodes_map = self.mapping(top.get("nodes") or {}, "nodes", _key_line(top, "nodes"), None)
        nodes = {
            str(node_id): self.replies(replies, f"nodes.{node_id}", _key_line(nodes_map, node_id))
            for node_id, replies in nodes_map.items()
        }
        messages_line = _key_line(top, "commit_messages")
        messages = self.sequence(top.get("commit_messages") or [], "commit_messages", messages_line)
        commit_messages, usages = [], {}
        for index, message in enumerate(messages):
            reply = self.commit_message(message, f"commit_messages[{index}]", _item_line(messages, index, messages_line))
            commit_messages.append(reply.content)
            if reply.usage is not None:
                usages[index] = reply.usage
        default = top.get("default")
        if default is not None:
            default = self.text(default, "default", _key_line(top, "default"))
        delay, chunk_delay = self.seconds(top, "delay"), self.seconds(top, "chunk_delay")
        continuing = top.get("continue_conversations", False)
        if not isinstance(continuing, bool):
            line = _key_line(top, "continue_conversations")
            raise self.fail(f"expected true or false, got {_kind(continuing)}", "continue_conversations", line)
        return Cassette(self.path, nodes, commit_messages, default, delay, continuing, usages, chunk_delay)

    def seconds(self, top: Mapping, key: str) -> float:
        value = top.get(key, 0)
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 600:
            raise self.fail("expected a number of seconds from 0 to 600", key, _key_line(top, key))
        return float(value)

    def replies(self, value: Any, key: str, line: int | None) -> tuple[ScriptedReply, ...]:
        items = self.sequence(value, key, line)
        return tuple(
            self.reply(item, f"{key}[{index}]", _item_line(items, index, line))
            for index, item in enumerate(items)
        )

    def reply(self, value: Any, key: str, line: int | None) -> ScriptedReply:
        if isinstance(value, str):
            return ScriptedReply(content=value)
        entry = self.mapping(value, key, line, _REPLY_KEYS)
        content = entry.get("content")
        content = (
            "" if content is None else self.text(content, _join(key, "content"), _key_line(entry, "content"))
        )
        calls_key = _join(key, "tool_calls")
        calls = self.sequence(entry.get("tool_calls") or [], calls_key, _key_line(entry, "tool_calls"))
        tool_calls = [
            self.tool_call(call, f"{calls_key}[{index}]", _item_line(calls, index, line))
            for index, call in enumerate(calls)
        ]
        error = entry.get("error")
        if error is not None:
            error = self.text(error, _join(key, "error"), _key_line(entry, "error"))
        usage = self.usage(entry, key)
        hold = entry.get("hold")
        if hold is not None:
            hold = self.text(hold, _join(key, "hold"), _key_line(entry, "hold"))
        return ScriptedReply(content, tool_calls, error, self.status_code(entry, key, error), usage, hold)

    def commit_message(self, value: Any, key: str, line: int | None) -> ScriptedReply:
        """A commit-message answer: its text, or `{content, usage}`."""
        if isinstance(value, str):
            return ScriptedReply(value)
        if not isinstance(value, Mapping):
            raise self.fail(f"expected a string or a mapping with content and usage, got {_kind(value)}", key, line)
        entry = self.mapping(value, key, line, _COMMIT_MESSAGE_KEYS)
        content = self.text(entry.get("content", ""), _join(key, "content"), _key_line(entry, "content"))
        return ScriptedReply(content, usage=self.usage(entry, key))

    def usage(self, entry: Mapping, key: str) -> ScriptedUsage | None:
        """`usage: {input_tokens, output_tokens, cache_read_tokens, cache_write_tokens}`: whole numbers of 0 or
        more, the cached ones part of the input."""
        if "usage" not in entry:
            return None
        usage_key = _join(key, "usage")
        fields = self.mapping(entry["usage"], usage_key, _key_line(entry, "usage"), _USAGE_KEYS)
        counts = {}
        for name in _USAGE_KEYS:
            value = fields.get(name, 0)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                where = (_join(usage_key, name), _key_line(fields, name))
                raise self.fail(f"expected a whole number of 0 or more, got {_kind(value)}", *where)
            counts[name] = value
        if counts["cache_read_tokens"] + counts["cache_write_tokens"] > counts["input_tokens"]:
            raise self.fail(
                "cache_read_tokens and cache_write_tokens are parts of input_tokens: together they cannot exceed it",
                usage_key, _key_line(entry, "usage"),
            )
        return ScriptedUsage(**counts)

    def status_code(self, entry: Mapping, key: str, error: str | None) -> int | None:
        value = entry.get("status_code")
        if value is None:
            return None
        where = (_join(key, "status_code"), _key_line(entry, "status_code"))
        if not isinstance(value, int) or isinstance(value, bool):
            raise self.fail(f"expected an integer, got {_kind(value)}", *where)
        if error is None:
            raise self.fail("status_code needs an error message beside it", *where)
        return value

    def tool_call(self, value: Any, key: str, line: int | None) -> ScriptedToolCall:
        entry = self.mapping(value, key, line, _TOOL_CALL_KEYS)
        if "name" not in entry:
            raise self.fail("a tool call needs a name", key, line)
        name = self.text(entry["name"], _join(key, "name"), _key_line(entry, "name"))
        args = self.mapping(entry.get("args") or {}, _join(key, "args"), _key_line(entry, "args"), None)
        return ScriptedToolCall(name, _plain(args))


def _plain(value: Any) -> Any:
    """ruamel's commented containers as plain dicts and lists (tool arguments go to JSON)."""
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def _kind(value: Any) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return f"{type(value).__name__} {value!r}"


def _own_line(value: Any) -> int | None:
    lc = getattr(value, "lc", None)
    return lc.line if lc is not None else None


def _key_line(mapping: Any, key: Any) -> int | None:
    try:
        return mapping.lc.key(key)[0]
    except (AttributeError, KeyError, TypeError):
        return _own_line(mapping)


def _item_line(sequence: Any, index: int, fallback: int | None) -> int | None:
    try:
        return sequence.lc.item(index)[0]
    except (AttributeError, KeyError, TypeError, IndexError):
        return fallback
