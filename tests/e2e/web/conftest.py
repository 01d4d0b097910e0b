"""A headless Debian chromium driven by Playwright for the web view's browser tests. They skip, saying why, only
when chromium (or Playwright) is not installed, and fail instead under CI (`make install` installs both there)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any, NoReturn

import pytest

from tests.support.web_view import chromium_path


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    executable = chromium_path()
    if executable is None:
        _missing("chromium is not installed (make install installs Debian's chromium: apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("Playwright for Python is not installed (make install installs the dev dependencies)")
    with sync_playwright() as playwright:
        # --no-sandbox: CI and dev containers run as root, where chromium's own sandbox cannot start.
        launched = playwright.chromium.launch(executable_path=executable, headless=True, args=["--no-sandbox"])
        yield launched
        launched.close()


def _missing(reason: str) -> NoReturn:
    """Skip a browser test for want of its browser; under CI, where `make install` provides it, fail."""
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(30_000)
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    yield opened
    context.close()
    assert not errors, f"the page raised: {errors}"
