"""The model an ACP agent names in its `session/new` answer (`models.currentModelId`), read from the raw message:
placeholders and hostile shapes name nothing."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from orchestra_adapters.backends.acp.conversation import _current_model


def test_the_current_model_of_a_session_new_answer() -> None:
    answer = {"sessionId": "s1", "models": {"currentModelId": "gemini-2.5-pro", "availableModels": []}}
    assert _current_model(answer) == "gemini-2.5-pro"


@pytest.mark.parametrize(
    "result",
    [
        None,
        "gemini",
        {"models": {"currentModelId": "gemini-2.5-pro"}},  # not a session/new answer (no sessionId)
        {"sessionId": "s1"},
        {"sessionId": "s1", "models": ["gemini"]},
        {"sessionId": "s1", "models": {"currentModelId": 7}},
        {"sessionId": "s1", "models": {"currentModelId": ""}},
        {"sessionId": "s1", "models": {"currentModelId": "default"}},  # claude-code-acp's
        {"sessionId": "s1", "models": {"currentModelId": "Auto"}},
        {"sessionId": "s1", "models": {"currentModelId": "x" * 201}},
    ],
)
def test_no_model_from_anything_else(result: Any) -> None:
    assert _current_model(result) == ""


@given(st.recursive(st.none() | st.text() | st.integers(), lambda inner: st.dictionaries(st.text(), inner)))
def test_any_shape_gives_a_short_string(result: Any) -> None:
    model = _current_model(result)
    assert isinstance(model, str) and len(model) <= 200
