"""Helpers for the web view's browser tests: finding chromium, a live `orchestra serve` on loopback."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from tests.support.server import LiveServer, make_project

CHROMIUM_PATHS = ("/usr/bin/chromium", "/usr/bin/chromium-browser")


def chromium_path() -> str | None:
    """Debian's chromium, or another found on PATH."""
    for candidate in CHROMIUM_PATHS:
        if os.access(candidate, os.X_OK):
            return candidate
    return shutil.which("chromium") or shutil.which("chromium-browser")


def live_server(tmp_path: Path, token: str | None = None) -> LiveServer:
    return LiveServer(make_project(tmp_path / "project"), token=token)
