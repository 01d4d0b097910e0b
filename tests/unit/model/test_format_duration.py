"""One duration formatter, three styles: exact for DOT and messages, readable for tables, seconds for progress."""

from __future__ import annotations

import pytest

from orchestra_core.model.values import format_duration, parse_duration


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(1.5, "1500ms"), (90, "90s"), (900, "15m"), (7200, "2h"), (86400, "1d"), (0.25, "250ms"), (0, "0ms")],
)
def test_exact_is_the_shortest_form_that_parses_back(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text
    assert parse_duration(format_duration(seconds)) == seconds


@pytest.mark.parametrize(
    ("seconds", "readable", "progress"),
    [
        (0.0004, "0ms", "0ms"),
        (0.05, "50ms", "50ms"),
        (0.84, "840ms", "840ms"),
        (2.2, "2.2s", "2.2s"),
        (59.9, "59.9s", "59.9s"),
        (185, "3m 05s", "185.0s"),
        (7260, "2h 01m", "7260.0s"),
    ],
)
def test_readable_rolls_over_to_minutes_and_hours_and_progress_stays_in_seconds(
    seconds: float, readable: str, progress: str
) -> None:
    assert format_duration(seconds, "readable") == readable
    assert format_duration(seconds, "seconds") == progress


def test_an_unknown_duration_is_empty_in_every_style() -> None:
    assert {format_duration(None, style) for style in ("exact", "readable", "seconds")} == {""}
