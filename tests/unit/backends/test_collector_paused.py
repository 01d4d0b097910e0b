"""collector_paused: the cycle collector is off inside the block and as it was after it."""

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
print(len(collections))
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "0", f"{done.stdout.strip()} collections while LangGraph was imported"
