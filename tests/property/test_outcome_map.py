"""OutcomeMap behaves as an immutable dict, whatever map each new one is derived from, and names what changed."""

from hypothesis import given, settings
from hypothesis import strategies as st

from orchestra_core.model.outcome import Outcome, StageStatus
from orchestra_core.model.outcome_map import OutcomeMap

KEYS = ["plan", "build", "test", "review", "fix", "gate"]

# Each step derives a map from an earlier one (mostly the newest, as a run does): (which, key, status).
steps = st.lists(
    st.tuples(st.one_of(st.just(-1), st.integers(0, 40)), st.sampled_from(KEYS), st.sampled_from(list(StageStatus))),
    max_size=60,
)
initial = st.dictionaries(st.sampled_from(KEYS), st.sampled_from(list(StageStatus)), max_size=3)


def _same(outcomes: OutcomeMap, model: dict[str, Outcome]) -> None:
    assert list(outcomes) == list(model)
    assert len(outcomes) == len(model)
    assert dict(outcomes.items()) == model
    for key in KEYS:
        assert (key in outcomes) == (key in model)
        assert outcomes.get(key) is model.get(key)
        if key in model:
            assert outcomes[key] is model[key]
    assert outcomes == model


@settings(max_examples=300, deadline=None)
@given(initial, steps)
def test_every_map_keeps_its_own_entries(start: dict[str, StageStatus], plan: list[tuple[int, str, StageStatus]]) -> None:
    model = {key: Outcome(status, notes="start") for key, status in start.items()}
    maps = [(OutcomeMap(model), model)]
    for number, (which, key, status) in enumerate(plan):
        parent, parent_model = maps[which % len(maps)]
        outcome = Outcome(status, notes=f"step {number}")
        derived = parent.with_outcome(key, outcome)
        derived_model = {**parent_model, key: outcome}
        maps.append((derived, derived_model))
    for outcomes, expected in maps:  # deriving from any of them changed none of the others
        _same(outcomes, expected)


@settings(max_examples=300, deadline=None)
@given(initial, steps)
def test_changes_since_names_the_keys_set_since_an_ancestor(
    start: dict[str, StageStatus], plan: list[tuple[int, str, StageStatus]]
) -> None:
    first = OutcomeMap({key: Outcome(status) for key, status in start.items()})
    maps, parents = [first], [-1]
    for which, key, status in plan:
        parent = which % len(maps)
        maps.append(maps[parent].with_outcome(key, Outcome(status)))
        parents.append(parent)
    for later in maps:
        for earlier in maps:
            changed = later.changes_since(earlier)
            if changed is None:
                continue
            # Replaying the named keys on the earlier map gives the later one.
            rebuilt = dict(earlier.items())
            rebuilt.update({key: later[key] for key in changed})
            assert rebuilt == dict(later.items())
    # The newest map names its changes since every map it was derived through from the newest map of its time.
    index = len(maps) - 1
    while parents[index] >= 0 and parents[index] == index - 1:
        index = parents[index]
        assert maps[-1].changes_since(maps[index]) is not None


def test_a_line_of_derived_maps_names_each_step() -> None:
    outcomes = OutcomeMap()
    first = outcomes.with_outcome("plan", Outcome.success())
    latest = first.with_outcome("build", Outcome.success()).with_outcome("plan", Outcome(StageStatus.FAIL))
    assert latest.changes_since(outcomes) == ["plan", "build", "plan"]
    assert latest.changes_since(first) == ["build", "plan"]
    assert first.changes_since(latest) is None
    forked = first.with_outcome("test", Outcome.success())  # from an older map: a line of its own
    assert forked.changes_since(first) is None
    assert list(forked) == ["plan", "test"] and list(latest) == ["plan", "build"]
    assert OutcomeMap({"a": Outcome.success()}).changes_since(outcomes) is None
