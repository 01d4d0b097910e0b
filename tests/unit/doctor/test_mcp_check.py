"""`orchestra doctor`'s mcp line: the library's version only, and no claim of a server that does not exist."""

from __future__ import annotations

import pytest

from orchestra_cli import doctor_checks
from orchestra_cli.doctor_check import OK, WARNING


def test_an_installed_library_is_ok_and_the_server_is_said_to_be_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(doctor_checks, "_version", lambda distribution: "1.9.0")
    check = doctor_checks._mcp()
    assert (check.name, check.status, check.detail) == (
        "mcp",
        OK,
        "library 1.9.0; the MCP tool server is not available yet",
    )


def test_a_missing_library_is_a_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(doctor_checks, "_version", lambda distribution: None)
    check = doctor_checks._mcp()
    assert (check.status, check.detail) == (WARNING, "library not installed; the MCP tool server is not available yet")
    assert "\n" not in check.detail
