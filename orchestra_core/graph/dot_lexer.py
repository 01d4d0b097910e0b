"""A lexer for Attractor's DOT subset that checks its constraints and rewrites the text for Graphviz.

Graphviz's own lexer cannot read everything Attractor allows (`agent.role` keys, bare values such as
`900s` or `claude-3.5`, the `\\n` / `\\t` / `\\\\` string escapes), so every identifier and value is
re-emitted as a quoted Graphviz string, line for line, and characters Graphviz would reinterpret are
carried through noncharacter placeholders that `restore` maps back after parsing. The lexer also rejects
what the subset forbids (undirected and strict graphs, several graphs, HTML labels, ports) with the line,
and records the order in which edges were declared, which Graphviz does not keep.

Large pipelines are common, so the work is done by a few whole-text regular expression passes rather
than a Python loop per token.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from attrs import frozen

from orchestra_core.model.errors import PipelineLoadError

KEYWORDS = frozenset({"digraph", "graph", "node", "edge", "subgraph", "strict"})
# Unicode noncharacters are reserved for a program's internal use, so no real text needs them.
_BACKSLASH, _NEWLINE, _RETURN, _KEY_MARK = "\ufdd0", "\ufdd1", "\ufdd2", "\ufdd3"
_PLACEHOLDERS = {_BACKSLASH: "\\", _NEWLINE: "\n", _RETURN: "\r", _KEY_MARK: ""}
_PLACEHOLDER_RE = re.compile(f"[{_BACKSLASH}{_NEWLINE}{_RETURN}{_KEY_MARK}]")
# Graphviz takes an edge attribute named `key` as the edge's name (and merges edges that share one);
# a mark in front of the name keeps it an ordinary attribute, and `restore` removes the mark.
_KEY_ATTRIBUTE_RE = re.compile(r'(?<![\\\w])"key"(?=\s*=)')
_ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "t": "\t"}

_WORD = r"(?:[A-Za-z0-9_.:+]+(?:-(?![->])[A-Za-z0-9_.:+]*)*|(?<!-)-(?![->])(?:[A-Za-z0-9_.:+]|-(?![->]))*)"
_STRING = r'"[^"\\]*(?:\\.[^"\\]*)*"'
# A quote that opens no complete string becomes a mark, so it cannot pair up with a later quote.
_STRAY_QUOTE = "\ufdd4"
# DOT joins double-quoted strings written `"a" + "b"` (across lines too) into one string.
_GAP = r"(?:\s|//[^\n]*|/\*.*?\*/)*"
_CONCAT = rf"{_STRING}(?:{_GAP}\+{_GAP}{_STRING})+"
_CONCAT_PART_RE = re.compile(rf"//[^\n]*|/\*.*?\*/|(?P<string>{_STRING})", re.DOTALL)
_REWRITE_RE = re.compile(
    rf"(?P<comment>//[^\n]*|\#[^\n]*|/\*.*?\*/)|(?P<concat>{_CONCAT})|(?P<string>{_STRING})|(?P<word>{_WORD})"
    rf"|(?P<stray>\")",
    re.DOTALL,
)
_BYTE_ORDER_MARK = "\ufeff"
# In the rewritten text every id and value is a quoted string; the skeleton replaces each with `S`.
_QUOTED_RE = re.compile(_STRING)
_PROBLEM_RE = re.compile(
    rf"(?P<undirected>--)|(?P<html><)|(?P<comment>/\*)|(?P<quote>[\"{_STRAY_QUOTE}])|(?P<other>[^\sS{{}}\[\]=;,+a-z>-]|-(?!>)|(?<!-)>)"
)
_HEADER_RE = re.compile(r"\s*(?P<keyword>[a-z]+|S)\s*(?P<name>S\s*)?(?P<brace>\{)?")
_EDGE_PAIR_RE = re.compile(rf"({_STRING})\s*(?=->\s*({_STRING}))")
# Graphviz refuses a quoted string of 16 KiB or more; longer values reach it as `"..." + "..."` pieces of
# at most this many characters (4 UTF-8 bytes each at worst, 2 for an escaped quote).
_PIECE_CHARS = 4000
# Graphviz's parser is right-recursive over an edge chain and runs out of stack (10,000 entries) near
# 2,500 operands, keeping only the statements before; longer chains reach it as several statements.
MAX_CHAIN_OPERANDS = 1000
# Braces (subgraphs) nest at most this deep; deeper nesting is refused rather than recursed into.
MAX_NESTING = 100
_ATTR_LIST = rf'\[(?:[^\]"]|{_STRING})*\]'
_CHAIN_RE = re.compile(
    rf"(?P<chain>(?:{_STRING}\s*->\s*)+{_STRING})(?P<attrs>(?:\s*{_ATTR_LIST})*)(?P<more>\s*->)?"
)
_PROBLEMS = {
    "undirected": "undirected edge '--' is not supported; use '->'",
    "html": "HTML labels ('<...>') are not supported; use a quoted string",
    "comment": "unterminated /* comment",
    "quote": "unterminated string",
}


_Fail = Callable[[str, int], PipelineLoadError]


@frozen
class LexedDot:
    """The result of lexing: Graphviz-safe text (same lines as the input) and the declared edge order."""

    graphviz_text: str
    edge_order: tuple[tuple[str, str], ...]

    def edge_only_ids(self) -> frozenset[str]:
        """The edge ends that appear nowhere else in the text: no node statement, no `{...}` group."""
        ends = {name for pair in self.edge_order for name in pair}
        if not ends:
            return frozenset()
        elsewhere: set[str] = set()
        text = self.graphviz_text
        for match in _QUOTED_RE.finditer(text):
            start, end = match.start() - 1, match.end()
            while start >= 0 and text[start].isspace():
                start -= 1
            while end < len(text) and text[end].isspace():
                end += 1
            before, after = text[max(start - 1, 0) : start + 1], text[end : end + 2]
            if before != "->" and after != "->" and not {before[-1:], after[:1]} & {"=", "+"}:
                elsewhere.add(unquote_graphviz(match.group(0)))
        return frozenset(ends - elsewhere)

    def first_line_of(self, name: str) -> int | None:
        """The line where an id first appears outside an attribute assignment (for messages)."""
        quoted = _graphviz_string(name)
        for match in re.finditer(re.escape(quoted), self.graphviz_text):
            before = self.graphviz_text[: match.start()].rstrip()[-1:]
            after = self.graphviz_text[match.end() :].lstrip()[:1]
            if before != "=" and after != "=":
                return self.graphviz_text.count("\n", 0, match.start()) + 1
        return None


def restore(value: str) -> str:
    """Map the placeholders carried through Graphviz back to the characters they stand for."""
    if not _PLACEHOLDER_RE.search(value):
        return value
    return _PLACEHOLDER_RE.sub(lambda m: _PLACEHOLDERS[m.group(0)], value)


def decode_string(body: str) -> str:
    """Decode the inside of an Attractor string: `\\"`, `\\\\`, `\\n`, `\\t`; line continuations vanish."""
    if "\\" not in body:
        return body

    def replace(match: re.Match[str]) -> str:
        char = match.group(1)
        if char == "\n":
            return ""
        return _ESCAPES.get(char, "\\" + char)

    return re.sub(r"\\(.)", replace, body, flags=re.DOTALL)


def quote_for_graphviz(value: str) -> str:
    """Quote a decoded value so that Graphviz reads it back as exactly `value` after `restore`."""
    safe = value.replace("\\", _BACKSLASH).replace("\n", _NEWLINE).replace("\r", _RETURN)
    return '"' + safe.replace('"', '\\"') + '"'


def unquote_graphviz(quoted: str) -> str:
    """Inverse of quote_for_graphviz."""
    return restore(quoted[1:-1].replace('\\"', '"'))


def lex(text: str, path: str | None = None) -> LexedDot:
    """Lex DOT text, enforce the subset's constraints and produce Graphviz-safe text.

    Raises:
        PipelineLoadError: The text breaks the subset (with the line of the problem).
    """
    text = text.removeprefix(_BYTE_ORDER_MARK)  # editors on Windows start UTF-8 files with one
    for placeholder in _PLACEHOLDERS:
        if placeholder in text:
            line = text.count("\n", 0, text.index(placeholder)) + 1
            raise PipelineLoadError(f"unsupported character U+{ord(placeholder):04X}", path=path, line=line)
    rewritten = _KEY_ATTRIBUTE_RE.sub(f'"{_KEY_MARK}key"', _REWRITE_RE.sub(_token_rewriter(text, path), text))
    skeleton = _QUOTED_RE.sub("S", rewritten)
    _check_skeleton(skeleton, path)
    pairs = tuple((unquote_graphviz(a), unquote_graphviz(b)) for a, b in _EDGE_PAIR_RE.findall(rewritten))
    return LexedDot(_split_long_chains(rewritten), pairs)


def _split_long_chains(text: str) -> str:
    """Rewrite every edge chain of more than MAX_CHAIN_OPERANDS ids as consecutive shorter chains.

    `a -> ... -> m -> ... -> z [attrs]` becomes `a -> ... -> m [attrs] m -> ... -> z [attrs]` on the same
    lines: the same edges with the same attributes. A chain that goes on into a subgraph is left whole
    (Graphviz then refuses it if it is too long, and so does the loader).
    """
    if text.count("->") < MAX_CHAIN_OPERANDS:
        return text
    return _CHAIN_RE.sub(_split_chain, text)


def _split_chain(match: re.Match[str]) -> str:
    chain, attrs = match.group("chain"), match.group("attrs")
    operands = list(_QUOTED_RE.finditer(chain))
    if match.group("more") is not None or len(operands) <= MAX_CHAIN_OPERANDS:
        return match.group(0)
    flat_attrs = attrs.replace("\n", " ").replace("\r", " ")  # strings hold no raw line breaks
    pieces, start = [], 0
    for cut in range(MAX_CHAIN_OPERANDS - 1, len(operands) - 1, MAX_CHAIN_OPERANDS - 1):
        operand = operands[cut]
        pieces.append(f"{chain[start : operand.end()]}{flat_attrs} {operand.group(0)}")
        start = operand.end()
    pieces.append(chain[start:])
    return "".join(pieces) + attrs


def _token_rewriter(text: str, path: str | None) -> Callable[[re.Match[str]], str]:
    def rewrite(match: re.Match[str]) -> str:
        if match.lastgroup == "word" and "+" in match.group(0) and not match.group(0).strip("+"):
            line = text.count("\n", 0, match.start()) + 1
            raise PipelineLoadError(
                f"'{match.group(0)}' outside a string: '+' joins double-quoted strings only, as in "
                '"first part" + "second part"',
                path=path,
                line=line,
            )
        return _rewrite_token(match)

    return rewrite


def _rewrite_token(match: re.Match[str]) -> str:
    kind = match.lastgroup
    raw = match.group(0)
    if kind == "concat":
        found = (part.group("string") for part in _CONCAT_PART_RE.finditer(raw))
        parts = [decode_string(string[1:-1]) for string in found if string is not None]
        return _graphviz_string("".join(parts)) + "\n" * raw.count("\n")
    if kind == "word":
        lowered = raw.lower()
        if lowered in KEYWORDS:
            return lowered
        return f'"{raw}"' if len(raw) <= _PIECE_CHARS else _graphviz_string(raw)
    if kind == "stray":
        return _STRAY_QUOTE
    if kind == "string":
        if len(raw) <= _PIECE_CHARS and "\\" not in raw and "\n" not in raw and "\r" not in raw:
            return raw
        # The re-encoded string stays on one line; the newlines after it keep later line numbers right.
        return _graphviz_string(decode_string(raw[1:-1])) + "\n" * raw.count("\n")
    return " " + "\n" * raw.count("\n")


def _graphviz_string(value: str) -> str:
    """`value` quoted for Graphviz; a long one as `"..." + "..."`, which Graphviz joins back."""
    if len(value) <= _PIECE_CHARS:
        return quote_for_graphviz(value)
    pieces = (value[start : start + _PIECE_CHARS] for start in range(0, len(value), _PIECE_CHARS))
    return "+".join(quote_for_graphviz(piece) for piece in pieces)


def _check_skeleton(skeleton: str, path: str | None) -> None:
    """Check the statement structure on the skeleton, where every id and value is the letter `S`."""

    def fail(detail: str, offset: int) -> PipelineLoadError:
        return PipelineLoadError(detail, path=path, line=skeleton.count("\n", 0, offset) + 1)

    header = _HEADER_RE.match(skeleton)
    keyword = header.group("keyword") if header else None
    if header is not None and keyword == "strict":
        raise fail("'strict' graphs are not supported; remove 'strict'", header.start("keyword"))
    if header is not None and keyword == "graph":
        raise fail("undirected graphs are not supported; use 'digraph'", header.start("keyword"))
    problem = _PROBLEM_RE.search(skeleton)
    if problem is not None:
        kind = problem.lastgroup or "other"
        raise fail(_PROBLEMS.get(kind, f"unexpected character {problem.group(0)!r}"), problem.start())
    if header is None or keyword is None:
        raise fail("empty file: expected 'digraph name { ... }'", len(skeleton))
    if keyword != "digraph":
        raise fail("expected 'digraph' at the start of the file", header.start("keyword"))
    if header.group("brace") is None:
        raise fail("expected '{' after 'digraph' and its name", header.end())
    _check_braces(skeleton, header.start("brace"), fail)


def _check_braces(skeleton: str, start: int, fail: _Fail) -> None:
    opened: list[int] = []
    for brace in re.finditer(r"[{}]", skeleton[start:]):
        position = start + brace.start()
        if brace.group(0) == "{":
            opened.append(position)
            if len(opened) > MAX_NESTING:
                raise fail(f"braces nest more than {MAX_NESTING} levels deep", position)
            continue
        opened.pop()
        if not opened:
            _check_trailing(skeleton, position + 1, fail)
            return
    line = skeleton.count("\n", 0, opened[0]) + 1
    raise fail(f"'{{' opened on line {line} is never closed", len(skeleton))


def _check_trailing(skeleton: str, position: int, fail: _Fail) -> None:
    rest = re.match(r"[\s;]*", skeleton[position:])
    end = position + (rest.end() if rest else 0)
    if end >= len(skeleton):
        return
    if re.match(r"(digraph|graph|strict)\b", skeleton[end:]):
        raise fail("only one graph per file is supported", end)
    raise fail("unexpected text after the end of the graph", end)
