"""Where each `{parameter}` of a project tool's command sits, as `/bin/sh` will read the command.

A small lexer of the POSIX shell's quoting and command separators. For every placeholder it tells which
pieces of the same shell word come before it (a value that begins a word and starts with `-` is an option)
and whether a `--` word ended the options of its simple command before it. A placeholder inside quotes or
after a backslash is refused: a shell-quoted value is unquoted again there, or expanded (`"{msg}"` with
`$(cmd)` runs `cmd`).
"""

from __future__ import annotations

import re
from collections.abc import Collection

from attrs import define, field, frozen

from orchestra_core.model.errors import OrchestraError

_SEPARATORS = frozenset(";&|()\n`")  # each ends a simple command (and a word); `$(` too
_BLANKS = frozenset(" \t\r")
_VARIABLE_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-]")  # what `$` expands unbraced
_DOUBLE_QUOTE_ESCAPES = frozenset('$`"\\\n')
TEXT, EXPANSION, PARAMETER = "text", "expansion", "parameter"


class CommandTemplateError(OrchestraError):
    """A command's template puts a placeholder where no quoting keeps its value data."""


@frozen
class Piece:
    """Part of a shell word: literal `text`, an `expansion` (`$...`, may be empty) or a `parameter`."""

    kind: str
    text: str


@frozen
class Slot:
    """One `{name}` of a template.

    Attributes:
        name: The parameter.
        start, end: Its span in the template.
        before: The pieces of its shell word before it.
        options_ended: A `--` word came before it in its simple command.
    """

    name: str
    start: int
    end: int
    before: tuple[Piece, ...]
    options_ended: bool


def slots(template: str, names: Collection[str]) -> list[Slot]:
    """Every placeholder of `names` in `template`, in order.

    Raises:
        CommandTemplateError: A placeholder stands inside single or double quotes or after a backslash;
            the message says to write it bare.
    """
    lexer = _Lexer(template, names)
    lexer.run()
    return lexer.found


@define
class _Lexer:
    text: str
    names: Collection[str]
    found: list[Slot] = field(factory=list)
    word: list[Piece] = field(factory=list)
    in_word: bool = False
    options_ended: bool = False

    def run(self) -> None:
        pattern = "|".join(re.escape(name) for name in sorted(self.names, key=len, reverse=True))
        places = {m.start(): m for m in re.finditer(r"\{(" + pattern + r")\}", self.text)} if self.names else {}
        index, quote = 0, ""
        while index < len(self.text):
            match = places.get(index)
            if match is not None:
                self._placeholder(match, quote)
                index = match.end()
                continue
            if self.text[index] == "\\" and index + 1 in places and (not quote or quote == '"'):
                self._placeholder(places[index + 1], "\\")
            if quote == "'":
                index, quote = self._single_quoted(index)
            elif quote == '"':
                index, quote = self._double_quoted(index)
            else:
                index, quote = self._unquoted(index)
        self._end_word()

    def _placeholder(self, match: re.Match[str], quote: str) -> None:
        name = match.group(1)
        if quote:
            where = {"'": "single quotes", '"': "double quotes", "\\": "a backslash"}[quote]
            raise CommandTemplateError(
                f"{{{name}}} stands inside {where}, where the shell would read its value as code or split it; "
                f"write {{{name}}} bare (every value is quoted for you)"
            )
        self.found.append(Slot(name, match.start(), match.end(), tuple(self.word), self.options_ended))
        self._add(Piece(PARAMETER, name))

    def _single_quoted(self, index: int) -> tuple[int, str]:
        if self.text[index] == "'":
            return index + 1, ""
        self._add(Piece(TEXT, self.text[index]))
        return index + 1, "'"

    def _double_quoted(self, index: int) -> tuple[int, str]:
        char = self.text[index]
        if char == '"':
            return index + 1, ""
        if char == "\\" and self.text[index + 1 : index + 2] in _DOUBLE_QUOTE_ESCAPES:
            self._add(Piece(TEXT, self.text[index + 1]))
            return index + 2, '"'
        if char == "$":
            return self._expansion(index), '"'
        self._add(Piece(EXPANSION, char) if char == "`" else Piece(TEXT, char))
        return index + 1, '"'

    def _unquoted(self, index: int) -> tuple[int, str]:
        char = self.text[index]
        if char in ("'", '"'):
            self.in_word = True
            return index + 1, char
        if char == "\\":
            following = self.text[index + 1 : index + 2]
            if following and following != "\n":  # a backslash-newline is nothing at all
                self._add(Piece(TEXT, following))
            return index + 2, ""
        if char in _BLANKS:
            self._end_word()
        elif char in _SEPARATORS or self.text.startswith("$(", index):
            self._end_word()
            self.options_ended = False  # a new (sub)command: the options it takes are its own
        elif char == "$":
            return self._expansion(index), ""
        else:
            self._add(Piece(TEXT, char))
        return index + 1, ""

    def _expansion(self, index: int) -> int:
        """`$` and the variable name after it (`${...}` and `$(...)` are read on as they come)."""
        self._add(Piece(EXPANSION, "$"))
        name = _VARIABLE_RE.match(self.text, index + 1)
        return name.end() if name else index + 1

    def _add(self, piece: Piece) -> None:
        self.in_word = True
        last = self.word[-1] if self.word else None
        if piece.kind == TEXT and last is not None and last.kind == TEXT:
            self.word[-1] = Piece(TEXT, last.text + piece.text)
        else:
            self.word.append(piece)

    def _end_word(self) -> None:
        if self.in_word and self.word == [Piece(TEXT, "--")]:
            self.options_ended = True
        self.word, self.in_word = [], False
