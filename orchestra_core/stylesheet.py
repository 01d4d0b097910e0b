"""The model stylesheet (Attractor section 8): parse CSS-like rules, rank them by specificity, apply them.

Grammar: `Selector '{' Declaration (';' Declaration)* ';'? '}'` repeated, where a selector is `*`, a shape
name, `.class` or `#node_id`, and a declaration is `property: value` with a quoted or bare value.
`/* ... */` comments are allowed anywhere between tokens. Other runners' spellings are read too (and
`Stylesheet.dialects` lists where): the properties `model` and `provider` for `llm_model` and
`llm_provider`, and `=` for `:` (as the spec's earlier examples wrote `box { model = "..." }`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Literal

from attrs import field, frozen

from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.graph import Node
from orchestra_core.model.quoting import quote_string, unescape_string

SelectorKind = Literal["universal", "shape", "class", "id"]
PROPERTIES = ("llm_model", "llm_provider", "reasoning_effort")
ALIASES: Mapping[str, str] = {"model": "llm_model", "provider": "llm_provider"}  # other runners' names
SPECIFICITY: Mapping[SelectorKind, int] = {"universal": 0, "shape": 1, "class": 2, "id": 3}

_SPACE_RE = re.compile(r"(?:\s+|/\*.*?\*/)*", re.DOTALL)
_IDENTIFIER_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CLASS_RE = re.compile(r"[A-Za-z0-9_-]+")
_PROPERTY_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")
_BARE_RE = re.compile(r"(?:[^\s;{}\"'/]|/(?!\*))+")
_BARE_RENDER_RE = re.compile(r"[A-Za-z0-9_.:+-][A-Za-z0-9_.:+/-]*")
_STRING_RES = {
    '"': re.compile(r'"((?:[^"\\]|\\.)*)"', re.DOTALL),
    "'": re.compile(r"'((?:[^'\\]|\\.)*)'", re.DOTALL),
}


class StylesheetSyntaxError(OrchestraError):
    """A model stylesheet does not parse.

    Attributes:
        text: The stylesheet text.
        position: 0-based offset of the problem in `text`.
        line: 1-based line of the problem within the stylesheet.
        column: 1-based column of the problem within that line.
        detail: The problem without the location.
    """

    def __init__(self, text: str, position: int, detail: str) -> None:
        self.text = text
        self.position = position
        self.line, self.column = _line_column(text, position)
        self.detail = detail
        super().__init__(f"model_stylesheet line {self.line}, column {self.column}: {detail}")


def _line_column(text: str, position: int) -> tuple[int, int]:
    """1-based line and column of an offset."""
    return text.count("\n", 0, position) + 1, position - (text.rfind("\n", 0, position) + 1) + 1


@frozen
class Selector:
    """Which nodes a rule applies to: every node, a shape, a class or one node id."""

    kind: SelectorKind
    value: str = ""

    @property
    def specificity(self) -> int:
        return SPECIFICITY[self.kind]

    def matches(self, node: Node) -> bool:
        """Whether the selector selects the node (a node without `shape` is a `box`)."""
        if self.kind == "universal":
            return True
        if self.kind == "shape":
            return node.shape == self.value
        if self.kind == "class":
            return self.value in node.classes
        return node.id == self.value

    def render(self) -> str:
        prefix = {"universal": "*", "shape": "", "class": ".", "id": "#"}[self.kind]
        return prefix if self.kind == "universal" else prefix + self.value


@frozen
class Declaration:
    """One `property: value` pair; `written` is how the file spelled it when that was another runner's way
    (`model: x`, `llm_model = x`), at offset `position` of the stylesheet."""

    property: str
    value: str
    written: str = field(default="", eq=False)
    position: int = field(default=0, eq=False)

    def render(self) -> str:
        return f"{self.property}: {_render_value(self.value)}"


def _declarations(items: Iterable[Declaration]) -> tuple[Declaration, ...]:
    return tuple(items)


@frozen
class StyleRule:
    """A selector and its declarations, in the order written."""

    selector: Selector
    declarations: tuple[Declaration, ...] = field(converter=_declarations)

    def render(self) -> str:
        body = " ".join(declaration.render() + ";" for declaration in self.declarations)
        return f"{self.selector.render()} {{ {body} }}" if body else f"{self.selector.render()} {{}}"


def _rules(items: Iterable[StyleRule]) -> tuple[StyleRule, ...]:
    return tuple(items)


@frozen
class DialectSpelling:
    """A declaration written as another runner writes it, read as Orchestra's `property: value`."""

    line: int
    column: int
    written: str
    property: str


@frozen
class Stylesheet:
    """Parsed rules in source order; `properties_for` resolves what a node gets."""

    rules: tuple[StyleRule, ...] = field(converter=_rules)
    text: str = field(default="", eq=False, repr=False)

    def dialects(self) -> list[DialectSpelling]:
        """The declarations written in another runner's spelling, in order, with their line and column."""
        found = []
        for rule in self.rules:
            for declaration in rule.declarations:
                if declaration.written:
                    line, column = _line_column(self.text, declaration.position)
                    found.append(DialectSpelling(line, column, declaration.written, declaration.property))
        return found

    def render(self) -> str:
        """Canonical text, one rule per line, that parses back to an equal Stylesheet."""
        return "\n".join(rule.render() for rule in self.rules)

    def properties_for(self, node: Node) -> dict[str, str]:
        """The properties the matching rules give the node: higher specificity wins, then the later rule."""
        return _Index(self.rules).properties_for(node)

    def apply(self, nodes: Iterable[Node]) -> list[Node]:
        """Nodes with stylesheet properties filled in where the node does not set them itself."""
        index = _Index(self.rules)
        styled = []
        for node in nodes:
            missing = {k: v for k, v in index.properties_for(node).items() if k not in node.attrs}
            styled.append(node.with_attrs_map(missing) if missing else node)
        return styled


def parse_stylesheet(text: str) -> Stylesheet:
    """Parse stylesheet text (empty or comment-only text gives an empty Stylesheet).

    Raises:
        StylesheetSyntaxError: The text is not a valid stylesheet; names the line and column.
    """
    return _Parser(text).parse()


class _Index:
    """Rules grouped by selector kind so that styling a node costs only the rules that can match it."""

    def __init__(self, rules: Iterable[StyleRule]) -> None:
        self.universal: list[tuple[int, StyleRule]] = []
        self.keyed: dict[SelectorKind, dict[str, list[tuple[int, StyleRule]]]] = {
            "shape": {},
            "class": {},
            "id": {},
        }
        for order, rule in enumerate(rules):
            if rule.selector.kind == "universal":
                self.universal.append((order, rule))
            else:
                self.keyed[rule.selector.kind].setdefault(rule.selector.value, []).append((order, rule))
        self._cache: dict[tuple[str, tuple[str, ...]], dict[str, str]] = {}

    def properties_for(self, node: Node) -> dict[str, str]:
        classes = tuple(dict.fromkeys(node.classes))
        # Nodes sharing a shape and classes (and no #id rule) resolve alike; big pipelines have many such.
        signature = (node.shape, classes) if node.id not in self.keyed["id"] else None
        cached = self._cache.get(signature) if signature else None
        if cached is None:
            cached = self._resolve(node, classes)
            if signature:
                self._cache[signature] = cached
        return dict(cached)

    def _resolve(self, node: Node, classes: tuple[str, ...]) -> dict[str, str]:
        by_class = sorted(
            (entry for name in classes for entry in self.keyed["class"].get(name, ())),
            key=lambda entry: entry[0],
        )
        resolved: dict[str, str] = {}
        for group in (
            self.universal,
            self.keyed["shape"].get(node.shape, ()),
            by_class,
            self.keyed["id"].get(node.id, ()),
        ):
            for _, rule in group:
                resolved.update((d.property, d.value) for d in rule.declarations)
        return resolved


def _render_value(value: str) -> str:
    if _BARE_RENDER_RE.fullmatch(value):
        return value
    return quote_string(value)


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def parse(self) -> Stylesheet:
        rules: list[StyleRule] = []
        self._skip()
        while self.pos < len(self.text):
            rules.append(self._rule())
            self._skip()
        return Stylesheet(rules, self.text)

    def _rule(self) -> StyleRule:
        selector = self._selector()
        self._skip()
        if self._peek() == ",":
            raise self._error("selector lists are not supported; write one rule per selector")
        opened = self.pos
        self._expect("{", f"expected '{{' after selector {selector.render()!r}")
        declarations: list[Declaration] = []
        while True:
            self._skip()
            char = self._peek()
            if char == "}":
                self.pos += 1
                return StyleRule(selector, declarations)
            if char == ";":
                self.pos += 1
                continue
            if char == "":
                raise StylesheetSyntaxError(
                    self.text, opened, f"'{{' of rule {selector.render()!r} is never closed"
                )
            declarations.append(self._declaration())
            self._skip()
            if self._peek() not in (";", "}"):
                raise self._error(f"expected ';' or '}}' after {declarations[-1].property!r}'s value")

    def _selector(self) -> Selector:
        char = self._peek()
        if char == "*":
            self.pos += 1
            return Selector("universal")
        if char in (".", "#"):
            self.pos += 1
            kind: SelectorKind
            pattern, kind, what = (
                (_CLASS_RE, "class", "a class name") if char == "." else (_IDENTIFIER_RE, "id", "a node id")
            )
            match = pattern.match(self.text, self.pos)
            if match is None:
                raise self._error(f"expected {what} after {char!r}")
            self.pos = match.end()
            return Selector(kind, match.group(0))
        match = _IDENTIFIER_RE.match(self.text, self.pos)
        if match is None:
            found = "'}'" if char == "}" else repr(char)
            raise self._error(f"expected a selector ('*', a shape, '.class' or '#node_id'), found {found}")
        self.pos = match.end()
        return Selector("shape", match.group(0))

    def _declaration(self) -> Declaration:
        start = self.pos
        match = _PROPERTY_RE.match(self.text, self.pos)
        if match is None:
            raise self._error(f"expected a property name, found {self._peek()!r}")
        written = match.group(0)
        name = ALIASES.get(written, written)
        if name not in PROPERTIES:
            self.pos = start
            raise self._error(f"unknown property {written!r}; allowed: {', '.join(PROPERTIES)}")
        self.pos = match.end()
        self._skip()
        separator = self._peek()
        if separator not in (":", "="):
            raise self._error(f"expected ':' after property {written!r}")
        self.pos += 1
        self._skip()
        value = self._value(written)
        spelled = f"{written} {separator}" if separator == "=" else f"{written}:"
        return Declaration(name, value, spelled if spelled != f"{name}:" else "", start)

    def _value(self, name: str) -> str:
        quote = self._peek()
        if quote in _STRING_RES:
            match = _STRING_RES[quote].match(self.text, self.pos)
            if match is None:
                raise self._error("unterminated string")
            value = unescape_string(match.group(1))
        else:
            match = _BARE_RE.match(self.text, self.pos)
            if match is None:
                raise self._error(f"expected a value for {name!r}")
            value = match.group(0)
        if not value:
            raise self._error(f"empty value for {name!r}")
        self.pos = match.end()
        return value

    def _skip(self) -> None:
        match = _SPACE_RE.match(self.text, self.pos)
        self.pos = match.end() if match else self.pos
        if self.text.startswith("/*", self.pos):
            raise self._error("unterminated /* comment")

    def _peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def _expect(self, char: str, message: str) -> None:
        if self._peek() != char:
            raise self._error(message)
        self.pos += 1

    def _error(self, detail: str) -> StylesheetSyntaxError:
        return StylesheetSyntaxError(self.text, self.pos, detail)
