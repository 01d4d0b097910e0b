"""The edge condition language (Attractor section 10): parse once into a small AST, evaluate many times.

Grammar: `Clause ( '&&' Clause )*`, a clause being `Key = Literal`, `Key != Literal` or a bare `Key`
(truthiness). Keys are `outcome`, `preferred_label`, `context.<path>` or a plain context key.
Literals are double-quoted strings with escapes or bare words.

One deliberate choice beyond the spec's pseudocode: a bare key is false when its value is empty,
`false` or `0`, so a boolean context flag reads as a boolean.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal, Protocol

from attrs import frozen

from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.quoting import quote_string, unescape_string

Operator = Literal["=", "!=", "truthy"]
_KEY_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*(?:\.[A-Za-z_][A-Za-z0-9_\-]*)*")
_BARE_RE = re.compile(r"[A-Za-z0-9_.:\-+/]+")
_STRING_RE = re.compile(r'"((?:[^"\\]|\\.)*)"', re.DOTALL)
_FALSY = frozenset({"", "false", "0"})


class ConditionSyntaxError(OrchestraError):
    """A condition does not parse; `position` is the 0-based offset of the problem."""

    def __init__(self, condition: str, position: int, detail: str) -> None:
        self.condition = condition
        self.position = position
        self.detail = detail
        super().__init__(f"{detail} at column {position + 1} of condition {condition!r}")


class ContextLookup(Protocol):
    """Anything with `get(key, default)`: a dict or the run Context."""

    def get(self, key: str, default: Any = None) -> Any: ...


def stringify(value: Any) -> str:
    """The string a context value compares as: booleans lower-case, None empty, containers as JSON."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return str(value)
    try:
        return json.dumps(value, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return str(value)


@frozen
class Clause:
    """One comparison: `key op literal`; for a bare key, op is `truthy` and literal is empty."""

    key: str
    op: Operator
    literal: str = ""

    def holds(self, outcome: str, preferred_label: str, context: ContextLookup) -> bool:
        actual = resolve_key(self.key, outcome, preferred_label, context)
        if self.op == "=":
            return actual == self.literal
        if self.op == "!=":
            return actual != self.literal
        return actual.strip().lower() not in _FALSY

    def render(self) -> str:
        if self.op == "truthy":
            return self.key
        return f"{self.key}{self.op}{_render_literal(self.literal)}"


@frozen
class Condition:
    """A parsed condition: all clauses must hold."""

    clauses: tuple[Clause, ...]

    def evaluate(
        self, *, outcome: str = "", preferred_label: str = "", context: ContextLookup | None = None
    ) -> bool:
        """Evaluate against an outcome status (lower-case), preferred label and context values."""
        lookup: ContextLookup = context if context is not None else {}
        return all(clause.holds(outcome, preferred_label, lookup) for clause in self.clauses)

    def render(self) -> str:
        """Canonical text that parses back to an equal Condition."""
        return " && ".join(clause.render() for clause in self.clauses)


def resolve_key(key: str, outcome: str, preferred_label: str, context: ContextLookup) -> str:
    """Section 10.4: `outcome`, `preferred_label`, `context.*` with the un-prefixed fallback, plain keys."""
    if key == "outcome":
        return outcome
    if key == "preferred_label":
        return preferred_label
    value = context.get(key)
    if value is None and key.startswith("context."):
        value = context.get(key[len("context.") :])
    return stringify(value)


def evaluate_condition(
    text: str, *, outcome: str = "", preferred_label: str = "", context: ContextLookup | None = None
) -> bool:
    """Parse and evaluate in one go; an empty condition is true."""
    if not text.strip():
        return True
    return parse_condition(text).evaluate(outcome=outcome, preferred_label=preferred_label, context=context)


def parse_condition(text: str) -> Condition:
    """Parse condition text into a Condition.

    Raises:
        ConditionSyntaxError: The text is not a valid condition (empty text included).
    """
    return _Parser(text).parse()


def _render_literal(literal: str) -> str:
    if literal and _BARE_RE.fullmatch(literal):
        return literal
    return quote_string(literal)


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def parse(self) -> Condition:
        self._skip_space()
        if self.pos == len(self.text):
            raise ConditionSyntaxError(self.text, 0, "empty condition")
        clauses = [self._clause()]
        while True:
            self._skip_space()
            if self.pos == len(self.text):
                return Condition(tuple(clauses))
            if not self.text.startswith("&&", self.pos):
                raise self._error(f"expected '&&' or the end, found {self.text[self.pos]!r}")
            self.pos += 2
            self._skip_space()
            clauses.append(self._clause())

    def _clause(self) -> Clause:
        if self.pos == len(self.text):
            raise self._error("expected a key after '&&'")
        match = _KEY_RE.match(self.text, self.pos)
        if match is None:
            raise self._error(f"expected a key such as outcome or context.name, found {self.text[self.pos]!r}")
        key = match.group(0)
        self.pos = match.end()
        self._skip_space()
        if self.text.startswith("!=", self.pos):
            self.pos += 2
            return Clause(key, "!=", self._literal())
        if self.text.startswith("==", self.pos):
            raise self._error("'==' is not an operator; use '='")
        if self.text.startswith("=", self.pos):
            self.pos += 1
            return Clause(key, "=", self._literal())
        if self.pos == len(self.text) or self.text.startswith("&&", self.pos):
            return Clause(key, "truthy")
        raise self._error(f"expected '=', '!=', '&&' or the end after {key!r}")

    def _literal(self) -> str:
        self._skip_space()
        if self.pos < len(self.text) and self.text[self.pos] == '"':
            match = _STRING_RE.match(self.text, self.pos)
            if match is None:
                raise self._error("unterminated string")
            self.pos = match.end()
            return unescape_string(match.group(1))
        match = _BARE_RE.match(self.text, self.pos)
        if match is None:
            raise self._error("expected a value after the operator")
        self.pos = match.end()
        return match.group(0)

    def _skip_space(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def _error(self, detail: str) -> ConditionSyntaxError:
        return ConditionSyntaxError(self.text, self.pos, detail)

