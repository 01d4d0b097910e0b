"""Session branch naming: the convention, ref-safe components, collisions, protected patterns."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from orchestra_core.workspace.naming import (
    free_branch_name,
    is_protected,
    ref_component,
    session_branch_name,
    session_short_id,
)

# git check-ref-format's rules for one component, as far as ref_component promises them.
_BAD_COMPONENT = re.compile(r"(^\.|\.\.|\.lock$|[\x00-\x20~^:?*\[\\\x7f]|@\{|/|\.$|^$)")


@pytest.mark.parametrize(
    ("session_id", "short"),
    [
        ("3f2a9c1e-7b4d-4e21-9a0b-5c6d7e8f9a01", "3f2a9c1e"),
        ("ABC", "abc"),
        ("a-b_c.d", "abcd"),
        ("---", "session"),
    ],
)
def test_session_short_id(session_id: str, short: str) -> None:
    assert session_short_id(session_id) == short


def test_session_branch_name_follows_the_convention() -> None:
    assert session_branch_name("orchestra/", "pr-review", "a1b2c3d4e5") == "orchestra/pr-review/a1b2c3d4"
    assert session_branch_name("bots-", "My Pipeline!", "x") == "bots-My-Pipeline/x"
    assert session_branch_name("o/", ".hidden..name.lock", "x") == "o/hidden.name/x"


@given(st.text(max_size=30))
def test_ref_component_is_always_a_valid_single_component(text: str) -> None:
    component = ref_component(text, "fallback")
    assert not _BAD_COMPONENT.search(component), component


@pytest.mark.parametrize(
    ("existing", "chosen"),
    [
        ([], "orchestra/p/abc"),
        (["orchestra/p/abc"], "orchestra/p/abc-2"),
        (["orchestra/p/abc", "orchestra/p/abc-2"], "orchestra/p/abc-3"),
        (["orchestra/p/abc/child"], "orchestra/p/abc-2"),
        (["orchestra/p"], "orchestra/p-2/abc"),
        (["orchestra"], "orchestra-2/p/abc"),
        (["orchestra", "orchestra-2/p"], "orchestra-2/p-2/abc"),
        (["main", "orchestra/q/abc"], "orchestra/p/abc"),
    ],
)
def test_free_branch_name(existing: list[str], chosen: str) -> None:
    assert free_branch_name("orchestra/p/abc", existing) == chosen


branch_names = st.lists(st.sampled_from(["o", "p", "abc", "abc-2", "p-2", "x"]), min_size=1, max_size=4).map(
    "/".join
)


@given(wanted=branch_names, existing=st.lists(branch_names, max_size=8))
def test_free_branch_name_never_clashes_and_is_deterministic(wanted: str, existing: list[str]) -> None:
    taken = set(existing)
    chosen = free_branch_name(wanted, taken)
    assert chosen == free_branch_name(wanted, list(reversed(existing)))
    assert chosen not in taken
    for branch in taken:
        assert not branch.startswith(chosen + "/") and not chosen.startswith(branch + "/")
    if not any(b == wanted or b.startswith(wanted + "/") or wanted.startswith(b + "/") for b in taken):
        assert chosen == wanted


@pytest.mark.parametrize(
    ("branch", "protected"),
    [
        ("main", True),
        ("master", True),
        ("release/1.0", True),
        ("release/1.0/hotfix", True),
        ("orchestra/p/abc", False),
        ("mainline", False),
        ("Main", False),
    ],
)
def test_is_protected_with_default_patterns(branch: str, protected: bool) -> None:
    assert is_protected(branch, ("main", "master", "release/*")) is protected


def test_is_protected_with_no_patterns() -> None:
    assert not is_protected("main", ())
