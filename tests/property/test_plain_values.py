"""Values a checkpoint keeps as they are (`_already_plain`) are exactly those `plain_values` gives back unchanged."""

from __future__ import annotations

import math
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from orchestra_core.session.checkpoints import _already_plain, plain_values

SCALARS = st.one_of(
    st.none(), st.booleans(), st.text(max_size=5), st.floats(allow_nan=False), st.integers(-(2**70), 2**70),
    st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
)


def _same(left: Any, right: Any) -> bool:
    if isinstance(left, float) and isinstance(right, float) and math.isinf(left):
        return left == right
    return type(left) is type(right) and left == right


@given(st.dictionaries(st.one_of(st.text(max_size=4), st.integers(0, 3)), SCALARS, max_size=4))
def test_values_kept_as_they_are_are_what_plain_values_gives_back(values: dict[Any, Any]) -> None:
    if _already_plain(values):
        plain = plain_values(values)
        assert plain.keys() == values.keys()
        assert all(_same(values[key], plain[key]) for key in values)
