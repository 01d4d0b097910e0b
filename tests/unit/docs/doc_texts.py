"""The user documentation (README.md, docs/*.md) as the docs tests read it: code spans, fenced blocks, the
`orchestra` command lines they show and the blocks marked runnable."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
RUNNABLE_MARK = "<!-- runnable -->"  # on the line right before a ```sh block: tests/e2e/docs runs it

_FENCE = re.compile(r"^```(\w*)\s*$")
_SPAN = re.compile(r"`([^`\n]+)`")
_SHORT_FORM = re.compile(
    r"^(?:init|compile|run|resume|replay|show|status|attach|doctor|mcp serve) --?[a-zA-Z]"
)


@dataclass(frozen=True)
class Block:
    doc: Path
    line: int  # of the opening fence
    language: str
    text: str
    runnable: bool

    @property
    def where(self) -> str:
        return f"{self.doc.relative_to(ROOT)}:{self.line}"


def blocks(doc: Path) -> list[Block]:
    """The fenced code blocks of a document."""
    found: list[Block] = []
    lines = doc.read_text(encoding="utf-8").splitlines()
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index].strip())
        if opening is None:
            index += 1
            continue
        end = index + 1
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        runnable = index > 0 and lines[index - 1].strip() == RUNNABLE_MARK
        found.append(Block(doc, index + 1, opening.group(1), "\n".join(lines[index + 1 : end]), runnable))
        index = end + 1
    return found


def prose(doc: Path) -> str:
    """The document without its fenced blocks."""
    text = doc.read_text(encoding="utf-8")
    return re.sub(r"^```.*?^```\s*$", "", text, flags=re.MULTILINE | re.DOTALL)


def code_spans(doc: Path) -> list[str]:
    """Every inline `code span` outside fenced blocks."""
    return _SPAN.findall(prose(doc))


def command_lines(doc: Path) -> Iterator[str]:
    """Every `orchestra ...` invocation the document shows: code spans and the lines of shell or plain blocks
    that start with it (after a `$ ` prompt, `&&`, `;`, `|` or ` -- `)."""
    texts = list(code_spans(doc))
    for block in blocks(doc):
        if block.language in ("", "sh", "bash", "console", "shell"):
            texts += block.text.splitlines()
    for text in texts:
        text = re.sub(r"\s+#.*$", "", text.strip()).removeprefix("$ ")
        if _SHORT_FORM.match(text):  # `run --backend simulate`: a command named without `orchestra`
            text = f"orchestra {text}"
        for segment in re.split(r"&&|;|\|\s|\s--\s", text):
            segment = segment.strip()
            words = segment.split()
            if words[:1] == ["orchestra"] and not (len(words) > 1 and words[1].endswith(":")):  # not output
                yield segment
