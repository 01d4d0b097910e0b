"""Commit message text: cleaning what a model wrote, the fallback, diff truncation, intent and trailers."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

FALLBACK_SUMMARY = "chore: auto-commit agent changes"
MAX_SUMMARY = 72
BODY_WIDTH = 72
DIFF_BUDGET = 12_000
INTENT_BUDGET = 2_000
_MIN_SHARE = 300

# A model must not forge our trailers (`Orchestra-Session: 7`); they are added to every message afterwards.
_OUR_TRAILER = re.compile(r"^\s*orchestra-[\w-]*\s*:", re.IGNORECASE)
_FENCE = re.compile(r"^\s*(```|~~~)")
_PREAMBLE = re.compile(
    r"^(sure|certainly|of course|okay|ok|absolutely|great|here(?:'s| is| are)|below is|the following"
    r"|i(?:'ve| have| would| will)|this commit message|commit message|suggested commit)\b",
    re.IGNORECASE,
)
_LABEL = re.compile(r"^(?:commit message|subject|summary|title|commit)\s*:\s*", re.IGNORECASE)
_CONVENTIONAL = re.compile(r"^([a-z]+(?:\([^)]*\))?!?:\s+)(.*)$")
_TRAILER_LINE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9-]*):\s+\S")
_KNOWN_TRAILERS = {"fixes", "closes", "resolves", "refs", "see-also"}
_NOT_A_SUMMARY = re.compile(
    r"^(diff --git|@@|\+\+\+ |--- |index [0-9a-f]|i'?m sorry|i am sorry|i cannot|i can'?t|as an ai|unable to)",
    re.IGNORECASE,
)
_IMPERATIVE = {
    "added": "Add", "adds": "Add", "adding": "Add",
    "fixed": "Fix", "fixes": "Fix", "fixing": "Fix",
    "updated": "Update", "updates": "Update", "updating": "Update",
    "removed": "Remove", "removes": "Remove", "removing": "Remove",
    "created": "Create", "creates": "Create", "creating": "Create",
    "implemented": "Implement", "implements": "Implement", "implementing": "Implement",
    "refactored": "Refactor", "refactors": "Refactor", "refactoring": "Refactor",
    "renamed": "Rename", "renames": "Rename", "moved": "Move", "moves": "Move",
    "changed": "Change", "changes": "Change", "improved": "Improve", "improves": "Improve",
    "introduced": "Introduce", "introduces": "Introduce", "replaced": "Replace", "replaces": "Replace",
    "deleted": "Delete", "deletes": "Delete", "wrote": "Write", "writes": "Write",
    "documented": "Document", "documents": "Document", "simplified": "Simplify", "simplifies": "Simplify",
    "extracted": "Extract", "extracts": "Extract", "converted": "Convert", "converts": "Convert",
    "enabled": "Enable", "enables": "Enable", "disabled": "Disable", "disables": "Disable",
    "handled": "Handle", "handles": "Handle", "ensured": "Ensure", "ensures": "Ensure",
    "tested": "Test", "tests": "Test",
}  # fmt: skip


def fallback_message(files: Sequence[str]) -> str:
    """The deterministic message used whenever no usable generated message exists."""
    return FALLBACK_SUMMARY + "\n\n" + "\n".join(f"- {path}" for path in files)


def clean_commit_message(raw: str, files: Sequence[str]) -> str | None:
    """Turn a model's answer into `summary\\n\\nbody`, or None when nothing usable is in it.

    Removes preambles ("Here is..."), code fences, labels, quotes, markdown emphasis and any trailers;
    makes the summary imperative where the first verb is a common past or present form; cuts it to at
    most 72 characters at a word boundary; wraps the body at 72 columns. An empty body becomes a short
    list of the files.
    """
    lines = [line.rstrip() for line in raw.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    lines = [line for line in lines if not _FENCE.match(line) and not _OUR_TRAILER.match(line)]
    while lines and (not lines[0].strip() or _is_preamble(lines[0])):
        lines.pop(0)
    if not lines:
        return None
    summary = _clean_summary(lines[0])
    if summary is None:
        return None
    body = _clean_body(lines[1:]) or _files_body(files)
    return f"{summary}\n\n{body}"


def _is_preamble(line: str) -> bool:
    text = line.strip().strip("*_#> ").strip()
    if _LABEL.match(text) and not _LABEL.sub("", text).strip():
        return True
    return bool(_PREAMBLE.match(text)) and (text.endswith((":", "!")) or len(text) < 25)


def _clean_summary(line: str) -> str | None:
    text = line.strip().lstrip("#>").strip()
    text = _LABEL.sub("", text)
    text = _strip_wrapping(text)
    if _NOT_A_SUMMARY.match(text) or sum(c.isalpha() for c in text) < 3:
        return None
    text = _imperative(text).rstrip(" .")
    if len(text) > MAX_SUMMARY:
        cut = text[: MAX_SUMMARY + 1].rfind(" ")
        text = text[: cut if cut > MAX_SUMMARY // 2 else MAX_SUMMARY].rstrip(" ,;:-.")
    return text


def _strip_wrapping(text: str) -> str:
    """Remove matching quotes, backticks and markdown emphasis around the whole summary."""
    pairs = {'"': '"', "'": "'", "`": "`", "“": "”", "‘": "’", "**": "**", "__": "__", "*": "*", "_": "_"}
    changed = True
    while changed and text:
        changed = False
        for opening, closing in pairs.items():
            if (
                len(text) > len(opening) + len(closing)
                and text.startswith(opening)
                and text.endswith(closing)
            ):
                text = text[len(opening) : -len(closing)].strip()
                changed = True
    return text


def _imperative(summary: str) -> str:
    match = _CONVENTIONAL.match(summary)
    prefix, rest = (match.group(1), match.group(2)) if match else ("", summary)
    first, _, remainder = rest.partition(" ")
    verb = _IMPERATIVE.get(first.lower())
    if verb is not None:
        first = verb if not prefix else verb.lower()
    rest = f"{first} {remainder}".rstrip() if remainder else first
    if not prefix and rest[:1].islower():
        rest = rest[0].upper() + rest[1:]
    return prefix + rest


def _clean_body(lines: Sequence[str]) -> str:
    paragraphs = _paragraphs(lines)
    while paragraphs and _is_trailer_block(paragraphs[-1]):
        paragraphs.pop()
    wrapped = ["\n".join(_wrap(line) for line in paragraph) for paragraph in paragraphs]
    return "\n\n".join(wrapped).strip()


def _paragraphs(lines: Sequence[str]) -> list[list[str]]:
    paragraphs: list[list[str]] = [[]]
    for line in lines:
        if line.strip():
            paragraphs[-1].append(line)
        elif paragraphs[-1]:
            paragraphs.append([])
    return [paragraph for paragraph in paragraphs if paragraph]


def _is_trailer_block(paragraph: Sequence[str]) -> bool:
    keys = [_TRAILER_LINE.match(line) for line in paragraph]
    if not all(keys):
        return False
    return any("-" in key.group(1) or key.group(1).lower() in _KNOWN_TRAILERS for key in keys if key)


def _wrap(line: str) -> str:
    if len(line) <= BODY_WIDTH:
        return line
    stripped = line.lstrip()
    indent = line[: len(line) - len(stripped)]
    bullet = re.match(r"^([-*+]|\d+[.)])\s+", stripped)
    follow = indent + " " * (len(bullet.group(0)) if bullet else 0)
    return textwrap.fill(stripped, BODY_WIDTH, initial_indent=indent, subsequent_indent=follow)


def _files_body(files: Sequence[str]) -> str:
    return textwrap.fill("Files: " + ", ".join(files), BODY_WIDTH, subsequent_indent="  ")


def truncate_diff(diff: str, budget: int = DIFF_BUDGET) -> tuple[str, bool]:
    """Cut a unified diff to about `budget` characters.

    Small files are kept whole (smallest first); the large ones left over share the remaining room,
    each keeping its first lines, or are listed by name when there is no room. Files keep their order.
    Returns the text and whether anything was cut.
    """
    if len(diff) <= budget:
        return diff, False
    sections = [s for s in re.split(r"(?m)^(?=diff --git )", diff) if s]
    whole: set[int] = set()
    used = 0
    for index in sorted(range(len(sections)), key=lambda i: len(sections[i])):
        if used + len(sections[index]) > budget:
            break
        whole.add(index)
        used += len(sections[index])
    cut = [index for index in range(len(sections)) if index not in whole]
    share = (budget - used) // len(cut)
    parts, unseen = [], []
    for index, section in enumerate(sections):
        if index in whole:
            parts.append(section)
        elif share >= _MIN_SHARE:
            parts.append(_head_of(section, share))
        else:
            unseen.append(_diff_file_name(section))
    if unseen:
        parts.append(f"[... diff of {len(unseen)} more files not shown: {', '.join(unseen)}]\n")
    return "".join(parts), True


def _head_of(section: str, size: int) -> str:
    head = section[:size].rsplit("\n", 1)[0]
    hidden = section.count("\n") - head.count("\n")
    return f"{head}\n[... {hidden} more lines of this file not shown]\n"


def _diff_file_name(section: str) -> str:
    match = re.match(r"diff --git a/(.*?) b/", section)
    return match.group(1) if match else "?"


def agent_intent(messages: Sequence[Mapping[str, Any]], budget: int = INTENT_BUDGET) -> str:
    """The text of the agent's last assistant message (what it said it was doing), shortened."""
    for message in reversed(messages):
        if str(message.get("role", message.get("type", ""))).lower() not in ("assistant", "ai"):
            continue
        text = _message_text(message.get("content"))
        if text.strip():
            text = text.strip()
            return text if len(text) <= budget else text[:budget].rstrip() + " [...]"
    return ""


def _message_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        parts = [item.get("text", "") if isinstance(item, Mapping) else str(item) for item in content]
        return "\n".join(part for part in parts if isinstance(part, str) and part)
    return ""


def with_trailers(message: str, trailers: Mapping[str, str]) -> str:
    """`message`, a blank line, and `Key: value` lines (values on one line)."""
    block = "\n".join(
        f"{key}: {' '.join(str(value).split()) or 'unknown'}" for key, value in trailers.items()
    )
    return f"{message.rstrip()}\n\n{block}\n"
