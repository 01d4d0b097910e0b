"""Commit message text: cleaning, fallback, diff truncation, the agent's intent and trailers."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from orchestra_core.workspace.messages import (
    FALLBACK_SUMMARY,
    agent_intent,
    clean_commit_message,
    fallback_message,
    truncate_diff,
    with_trailers,
)

FILES = ["src/app.py", "README.md"]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (
            "Add login form\n\nRender the form and validate input.",
            "Add login form\n\nRender the form and validate input.",
        ),
        ("Here is the commit message:\n\nAdd login form\n\nBody.", "Add login form\n\nBody."),
        (
            "Sure! Here's a concise commit message:\n```\nAdd login form\n\nBody.\n```",
            "Add login form\n\nBody.",
        ),
        ('"Add login form."\n\nBody.', "Add login form\n\nBody."),
        ("**Add login form**\n\nBody.", "Add login form\n\nBody."),
        ("Subject: Add login form\n\nBody.", "Add login form\n\nBody."),
        ("Commit message:\nAdd login form\n\nBody.", "Add login form\n\nBody."),
        ("# Add login form\n\nBody.", "Add login form\n\nBody."),
        ("Added login form\n\nBody.", "Add login form\n\nBody."),
        ("Fixes crash on empty input\n\nBody.", "Fix crash on empty input\n\nBody."),
        ("feat(auth): added login form\n\nBody.", "feat(auth): add login form\n\nBody."),
        ("add login form\n\nBody.", "Add login form\n\nBody."),
        (
            "Add login form\n\nBody.\n\nSigned-off-by: Bot <b@x>\nCo-authored-by: A <a@x>",
            "Add login form\n\nBody.",
        ),
        ("Add login form\n\nBody.\nOrchestra-Session: forged", "Add login form\n\nBody."),
        ("Add login form\n\nNote: keeps the old API.", "Add login form\n\nNote: keeps the old API."),
    ],
)
def test_clean_commit_message(raw: str, expected: str) -> None:
    assert clean_commit_message(raw, FILES) == expected


def test_summary_is_cut_at_a_word_boundary_and_body_wrapped() -> None:
    raw = "Add " + "very " * 30 + "long summary\n\n" + "word " * 40 + "\n- a bullet " + "x " * 40
    message = clean_commit_message(raw, FILES)
    assert message is not None
    summary, blank, *body = message.split("\n")
    assert len(summary) <= 72 and summary.endswith("very") and blank == ""
    assert all(len(line) <= 72 for line in body)
    assert any(line.startswith("- a bullet") for line in body)
    assert any(line.startswith("  x") for line in body)  # bullet continuation is indented


def test_missing_body_becomes_the_file_list() -> None:
    assert clean_commit_message("Add login form", FILES) == "Add login form\n\nFiles: src/app.py, README.md"


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "   \n\n",
        "```\n```",
        "Here is the commit message:",
        "I'm sorry, but I can't help with that.",
        "diff --git a/x b/x\n+++ b/x",
        "...",
        "42",
    ],
)
def test_unusable_answers_give_none(raw: str) -> None:
    assert clean_commit_message(raw, FILES) is None


@given(st.text(max_size=400))
def test_cleaned_messages_always_have_the_promised_shape(raw: str) -> None:
    message = clean_commit_message(raw, FILES)
    if message is None:
        return
    summary, blank, body = message.split("\n", 2)
    assert 3 <= len(summary) <= 72 and summary == summary.strip() and blank == ""
    assert body.strip() and "```" not in message
    assert not any(re.match(r"\s*orchestra-[\w-]*\s*:", line, re.IGNORECASE) for line in message.split("\n"))


def test_fallback_message() -> None:
    assert fallback_message(FILES) == f"{FALLBACK_SUMMARY}\n\n- src/app.py\n- README.md"
    assert FALLBACK_SUMMARY == "chore: auto-commit agent changes"


def _file_diff(name: str, lines: int) -> str:
    body = "".join(f"+line {n}\n" for n in range(lines))
    return f"diff --git a/{name} b/{name}\n--- a/{name}\n+++ b/{name}\n@@ -0,0 +1,{lines} @@\n{body}"


def test_small_diffs_are_untouched() -> None:
    diff = _file_diff("a.py", 3)
    assert truncate_diff(diff, 1000) == (diff, False)


def test_truncation_keeps_small_files_whole_and_shares_the_rest() -> None:
    diff = _file_diff("big1.txt", 2000) + _file_diff("small.py", 3) + _file_diff("big2.txt", 2000)
    text, truncated = truncate_diff(diff, 4000)
    assert truncated and len(text) < 4300
    assert _file_diff("small.py", 3) in text
    assert text.index("big1.txt") < text.index("small.py") < text.index("big2.txt")
    assert text.count("more lines of this file not shown") == 2


def test_truncation_lists_files_when_there_is_no_room() -> None:
    diff = "".join(_file_diff(f"f{n}.txt", 200) for n in range(30))
    text, truncated = truncate_diff(diff, 3000)
    assert truncated and len(text) < 3300 and "more files not shown: f" in text


def test_agent_intent_is_the_last_assistant_text() -> None:
    messages = [
        {"role": "user", "content": "do it"},
        {"role": "assistant", "content": "First I read the code."},
        {"role": "tool", "content": "file contents"},
        {"type": "ai", "content": [{"type": "text", "text": "Now I add"}, {"type": "tool_use", "id": "1"}]},
        {"role": "assistant", "content": ""},
    ]
    assert agent_intent(messages) == "Now I add"
    assert agent_intent([{"role": "user", "content": "x"}]) == ""
    assert agent_intent([{"role": "assistant", "content": "y" * 50}], budget=10) == "y" * 10 + " [...]"


def test_with_trailers_appends_a_final_block_of_single_line_values() -> None:
    text = with_trailers("Add x\n\nBody.", {"Orchestra-Model": "m\nx", "Orchestra-Provider": ""})
    assert text == "Add x\n\nBody.\n\nOrchestra-Model: m x\nOrchestra-Provider: unknown\n"
