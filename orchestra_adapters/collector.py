"""Python's cycle collector paused while the LLM frameworks are imported."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cycle collector for the block: importing LangChain and LangGraph makes about 180,000
    objects that live as long as the process, and collecting over them again and again as they are made cost
    a sixth of the import (0.1 s of the quick start's run, issue 16). Reference counting still frees what
    is dropped; the collector runs again after the block (unless it was paused already)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
