"""The objects alive when a run starts are frozen for the collector during the run, and only during it."""

import gc

import pytest

from orchestra_adapters.collector import setup_frozen


def test_what_lives_before_the_run_is_frozen_until_it_ends() -> None:
    before = gc.get_freeze_count()
    setup = [{"node": number} for number in range(1000)]
    with setup_frozen():
        assert gc.get_freeze_count() >= before + len(setup)
    assert gc.get_freeze_count() == 0  # back with the collector, so a process running many pipelines collects them


def test_a_failing_run_unfreezes_too() -> None:
    with pytest.raises(RuntimeError), setup_frozen():
        raise RuntimeError("the run failed")
    assert gc.get_freeze_count() == 0
