"""Double-quoted strings as DOT files, edge conditions and model stylesheets write them."""

from __future__ import annotations

import re

_STRING_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", '"': '"', "'": "'"}


def quote_string(value: str) -> str:
    """A double-quoted string with the escapes DOT, conditions and stylesheets share (`\\ \" \\n \\t`)."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    return f'"{escaped}"'


def unescape_string(body: str) -> str:
    """Decode the inside of a quoted string: `\\n`, `\\t`, `\\\\`, `\\"`, `\\'`; other escapes stay as written."""
    if "\\" not in body:
        return body
    return re.sub(r"\\(.)", lambda m: _STRING_ESCAPES.get(m.group(1), "\\" + m.group(1)), body, flags=re.DOTALL)
