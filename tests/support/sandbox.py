"""Whether bubblewrap runs here: sandbox tests skip, saying why, when it does not."""

from __future__ import annotations

import functools

import pytest

from orchestra_adapters.process.sandbox import find_bwrap, probe


@functools.cache
def bwrap_problem() -> str | None:
    """None when `bwrap` is installed and runs a sandboxed command, else why not."""
    bwrap = find_bwrap()
    if bwrap is None:
        return "bubblewrap is not installed (make install installs it when run as root with apt-get)"
    problem = probe(bwrap)
    return None if problem is None else f"bubblewrap does not run here: {problem}"


def needs_bwrap() -> pytest.MarkDecorator:
    """Skip the test, with the reason, unless bubblewrap works on this machine."""
    problem = bwrap_problem()
    return pytest.mark.skipif(problem is not None, reason=problem or "")
