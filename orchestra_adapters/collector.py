"""Python's cycle collector paused while the LLM frameworks are imported."""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cycle collector for the block, and freeze what it imported.

    Importing LangChain and LangGraph makes about 180,000 objects that live as long as the process. The
    collector ran over them some 240 times on the way (a sixth of the import), and every full collection
    after it went over them again: 0.25 s of the quick start's run together (issue 16). So when the block
    imported any module, everything alive after it moves to the permanent generation (`gc.freeze()`; what of
    it becomes garbage later is left to reference counting); a block that imported nothing (a process's
    second run) freezes nothing. Reference counting still frees what is dropped inside the block; the
    collector runs again after it (unless it was paused already).
    """
    modules = len(sys.modules)
    with collector_off():
        try:
            yield
        finally:
            if len(sys.modules) > modules:
                gc.freeze()


@contextmanager
def collector_off() -> Iterator[None]:
    """Pause Python's cycle collector for the block, freezing nothing: for a block that makes many objects
    without cycles. Reference counting still frees what is dropped; the collector runs again after the block
    (unless it was paused already)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()



# Whether `pause_for_startup` paused the collector, and `setup_frozen` is to start it again.
_startup_paused = [False]


def pause_for_startup() -> None:
    """Pause the cycle collector while a run command starts: it imports Orchestra's modules and its libraries
    (some 500) and builds the run, and the collector went over those young objects about 120 times on the
    way, 0.02 s of a 5-node run's 0.27 s (issue 33). `setup_frozen` starts it again as the run begins, freezing
    what start-up made (a few thousand objects of it garbage, about 0.5 MB held until the run ends: collecting
    them first would cost what the pause saves). A no-op when the collector is off already."""
    if gc.isenabled():
        gc.disable()
        _startup_paused[0] = True


def end_startup_pause() -> None:
    """Start the cycle collector again if `pause_for_startup` paused it."""
    if _startup_paused[0]:
        _startup_paused[0] = False
        gc.enable()


@contextmanager
def setup_frozen() -> Iterator[None]:
    """Around a run: everything alive when it starts (the imported modules, the pipeline, the ports) is in the
    permanent generation until it ends, so the collector's full collections go over what the run makes only.

    Those few hundred thousand objects live as long as the run; going over them again at every full collection
    made the cost of a node of a 10,000-node run grow with the run by a tenth (issue 16). They go back to the
    collector afterwards (`gc.unfreeze()`), so a process that runs many pipelines still collects what of them
    became cyclic garbage, after each run. A collector paused for start-up runs again from here.
    """
    gc.freeze()
    end_startup_pause()
    try:
        yield
    finally:
        gc.unfreeze()
