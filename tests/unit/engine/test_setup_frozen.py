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


def test_a_collector_paused_for_start_up_runs_again_when_the_run_begins() -> None:
    from orchestra_adapters.collector import pause_for_startup

    assert gc.isenabled()
    try:
        pause_for_startup()
        assert not gc.isenabled()  # while the run command imports and builds the run
        with setup_frozen():
            assert gc.isenabled()  # the run itself is collected as ever
        assert gc.isenabled()
    finally:
        gc.enable()


def test_a_collector_someone_else_turned_off_stays_off() -> None:
    from orchestra_adapters.collector import pause_for_startup

    gc.disable()
    try:
        pause_for_startup()
        with setup_frozen():
            assert not gc.isenabled()
    finally:
        gc.enable()
