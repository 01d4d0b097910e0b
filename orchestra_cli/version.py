"""`orchestra --version`: the installed distribution's version, read from its metadata (no heavy import)."""

from __future__ import annotations

import sys


def orchestra_version() -> str:
    """The installed `orchestra` distribution's version, or `unknown` when it is not installed (a bare checkout)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("orchestra")
    except PackageNotFoundError:
        return "unknown"


def version_line() -> str:
    """`orchestra 0.1.0 (Python 3.11.9)`."""
    python = ".".join(str(part) for part in sys.version_info[:3])
    return f"orchestra {orchestra_version()} (Python {python})"
