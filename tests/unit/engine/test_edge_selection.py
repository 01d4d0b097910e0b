"""Edge selection (Attractor 3.3), label normalization and accelerator keys."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from orchestra_core.engine.edges import select_edge
from orchestra_core.model.conditions import ConditionSyntaxError
from orchestra_core.model.context import Context
from orchestra_core.model.graph import Edge
from orchestra_core.model.interview import accelerator_key, normalize_label, split_accelerator
from orchestra_core.model.outcome import Outcome, StageStatus


def edge(target: str, **attrs: str) -> Edge:
    return Edge("n", target, attrs)


SUCCESS = Outcome(StageStatus.SUCCESS)


def test_no_edges_selects_nothing() -> None:
    assert select_edge((), SUCCESS, Context()) is None


def test_condition_match_wins_over_weight() -> None:
    edges = (edge("heavy", weight="100"), edge("guarded", condition="outcome=success"))
    chosen = select_edge(edges, SUCCESS, Context())
    assert chosen is not None and (chosen.edge.target, chosen.reason) == ("guarded", "condition")


def test_among_matching_conditions_weight_then_lexical() -> None:
    edges = (
        edge("b", condition="outcome=success"),
        edge("a", condition="outcome=success"),
        edge("z", condition="outcome=success", weight="2"),
    )
    assert select_edge(edges, SUCCESS, Context()).edge.target == "z"
    assert select_edge(edges[:2], SUCCESS, Context()).edge.target == "a"


def test_conditions_read_context() -> None:
    edges = (edge("deploy", condition="context.tests_passed=true"), edge("fix"))
    context = Context({"tests_passed": True})
    assert select_edge(edges, SUCCESS, context).edge.target == "deploy"
    assert select_edge(edges, SUCCESS, Context()).edge.target == "fix"


def test_preferred_label_matches_after_normalization() -> None:
    edges = (edge("a", label="[A] Approve"), edge("r", label="R) Revise"), edge("x", label="Other"))
    outcome = Outcome(StageStatus.SUCCESS, preferred_label="  revise ")
    chosen = select_edge(edges, outcome, Context())
    assert (chosen.edge.target, chosen.reason) == ("r", "preferred_label")


def test_preferred_label_ignores_conditional_edges() -> None:
    edges = (edge("c", label="Go", condition="outcome=fail"), edge("u", label="Other"))
    outcome = Outcome(StageStatus.SUCCESS, preferred_label="Go")
    assert select_edge(edges, outcome, Context()).edge.target == "u"


def test_suggested_next_ids_in_their_order() -> None:
    edges = (edge("a"), edge("b"), edge("c"))
    outcome = Outcome(StageStatus.SUCCESS, suggested_next_ids=("zz", "c", "b"))
    chosen = select_edge(edges, outcome, Context())
    assert (chosen.edge.target, chosen.reason) == ("c", "suggested_next_ids")


def test_weight_breaks_ties_for_unconditional_edges() -> None:
    edges = (edge("a", weight="1"), edge("b", weight="5"), edge("c"))
    assert select_edge(edges, SUCCESS, Context()).edge.target == "b"


def test_lexical_tiebreak_is_the_final_fallback() -> None:
    edges = (edge("zeta"), edge("alpha"), edge("mid"))
    chosen = select_edge(edges, SUCCESS, Context())
    assert (chosen.edge.target, chosen.reason) == ("alpha", "weight")


def test_no_fallthrough_when_disallowed() -> None:
    edges = (edge("next"), edge("on_fail", condition="outcome=fail"))
    failed = Outcome.fail("boom")
    assert select_edge(edges, failed, Context(), allow_fallthrough=False).edge.target == "on_fail"
    assert select_edge(edges[:1], failed, Context(), allow_fallthrough=False) is None


def test_bad_condition_raises() -> None:
    with pytest.raises(ConditionSyntaxError):
        select_edge((edge("x", condition="outcome=="),), SUCCESS, Context())


@pytest.mark.parametrize(
    ("label", "key", "rest"),
    [("[Y] Yes, deploy", "Y", "Yes, deploy"), ("Y) Yes, deploy", "Y", "Yes, deploy"), ("Y - Yes, deploy", "Y", "Yes, deploy")],
)
def test_accelerator_prefixes(label: str, key: str, rest: str) -> None:
    assert split_accelerator(label) == (key, rest)
    assert accelerator_key(label) == key
    assert normalize_label(label) == rest.lower()


def test_accelerator_falls_back_to_first_character() -> None:
    assert accelerator_key("yes, deploy") == "Y"
    assert split_accelerator("Yes, deploy") == (None, "Yes, deploy")


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=30))
def test_normalized_labels_are_trimmed_and_lower_case(label: str) -> None:
    normalized = normalize_label(label)
    assert normalized == normalized.strip()
    assert normalized == normalized.lower()


@given(st.text(alphabet="abcdefgh ,.", max_size=30))
def test_labels_without_a_prefix_only_lose_case_and_outer_space(label: str) -> None:
    if split_accelerator(label)[0] is None:
        assert normalize_label(label) == label.strip().lower()


@given(st.sampled_from("ABCXYZ"), st.text(alphabet="abc xyz,", min_size=1, max_size=20).map(str.strip).filter(bool))
def test_prefixed_labels_normalize_to_their_text(key: str, text: str) -> None:
    for label in (f"[{key}] {text}", f"{key}) {text}", f"{key} - {text}"):
        assert normalize_label(label) == text.lower()
        assert accelerator_key(label) == key
