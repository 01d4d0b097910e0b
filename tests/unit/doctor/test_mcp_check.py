"""`orchestra doctor`'s mcp line: the library the tool server runs on, at a version whose server API it uses."""

from __future__ import annotations

import pytest

from orchestra_cli import doctor_checks
from orchestra_cli.doctor_check import ERROR, OK


def test_an_installed_library_is_ok_and_the_server_is_ready(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(doctor_checks, "_version", lambda distribution: "2.3.0")
    check = doctor_checks._mcp()
    assert (check.name, check.status, check.detail) == (
        "mcp",
        OK,
        "library 2.3.0; the tool server is ready (orchestra mcp serve)",
    )


@pytest.mark.parametrize(("version", "start"), [(None, "library not installed"), ("1.9.0", "library 1.9.0 is too old")])
def test_a_missing_or_old_library_is_an_error_saying_what_needs_it(
    monkeypatch: pytest.MonkeyPatch, version: str | None, start: str
) -> None:
    monkeypatch.setattr(doctor_checks, "_version", lambda distribution: version)
    check = doctor_checks._mcp()
    assert check.status == ERROR
    assert check.detail.startswith(start) and "mcp>=2.3" in check.detail
    assert "\n" not in check.detail
