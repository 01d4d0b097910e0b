"""collector_paused: the cycle collector is off inside the block and as it was after it; what a block that
imported something leaves alive is frozen."""

from __future__ import annotations

import gc
import subprocess
import sys

import pytest

from orchestra_adapters.collector import collector_paused


def test_the_collector_is_paused_inside_and_enabled_again_after() -> None:
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner block leaves it paused for the outer one
    assert gc.isenabled()


def test_an_error_in_the_block_still_enables_it_again() -> None:
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("boom")
    assert gc.isenabled()


def test_a_collector_paused_before_stays_paused() -> None:
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_the_agent_stack_is_imported_with_the_collector_paused() -> None:
    """Creating the LangGraph backend imports LangGraph with no collection on the way (in a fresh process;
    one pass over the new objects may follow once the collector runs again)."""
    probe = """
import gc
from orchestra_adapters.backends.registry import create_backend
import sys
collections = []


def importing():
    module = sys.modules.get("orchestra_adapters.backends.langgraph_backend")
    return not hasattr(module, "LangGraphBackend")  # not imported yet, or its import under way


gc.callbacks.append(lambda phase, info: phase == "start" and importing() and collections.append(info["generation"]))
from pathlib import Path
create_backend("langgraph", chat_models=None, resolver=None, toolset=None, state_path=Path("agents.db"))
assert "langgraph.graph" in sys.modules, "the probe imported nothing"
print(len(collections), gc.get_freeze_count() > 0)
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    collected, frozen = done.stdout.split()
    assert collected == "0", f"{collected} collections while LangGraph was imported"
    assert frozen == "True", "the objects the import made were not frozen"


def test_a_block_that_imports_nothing_freezes_nothing() -> None:
    frozen = gc.get_freeze_count()
    with collector_paused():
        import json  # already imported: nothing new

        json.dumps({})
    assert gc.get_freeze_count() == frozen
