"""`orchestra doctor`'s sandbox line: the configured kind, whether bwrap is installed and whether it runs here."""

from __future__ import annotations

import pytest

from orchestra_adapters.process import sandbox
from orchestra_cli import doctor_checks
from orchestra_cli.doctor_check import ERROR, OK
from orchestra_core.model.settings import OrchestraSettings, SandboxSettings
from tests.support.sandbox import needs_bwrap

BUBBLEWRAP = OrchestraSettings(sandbox=SandboxSettings(kind="bubblewrap"))


def check(
    monkeypatch: pytest.MonkeyPatch, settings: OrchestraSettings, bwrap: str | None, problem: str | None
) -> tuple[str, str]:
    monkeypatch.setattr(sandbox, "find_bwrap", lambda: bwrap)
    monkeypatch.setattr(sandbox, "probe", lambda path, network=False: problem)
    result = doctor_checks._sandbox(settings)
    assert result.name == "sandbox" and "\n" not in result.detail
    return result.status, result.detail


def test_configured_and_working(monkeypatch: pytest.MonkeyPatch) -> None:
    assert check(monkeypatch, BUBBLEWRAP, "/usr/bin/bwrap", None) == (
        OK,
        "bubblewrap (/usr/bin/bwrap) works: commands and CLI agents write only their worktrees, network off",
    )


def test_configured_but_missing_or_broken_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    status, detail = check(monkeypatch, BUBBLEWRAP, None, None)
    assert status == ERROR and "bwrap is not installed" in detail and "apt-get install bubblewrap" in detail
    status, detail = check(
        monkeypatch, BUBBLEWRAP, "/usr/bin/bwrap", "No permissions to create new namespace"
    )
    assert status == ERROR and detail.endswith(
        "does not run a sandbox here: No permissions to create new namespace"
    )


def test_off_says_whether_it_could_be_turned_on(monkeypatch: pytest.MonkeyPatch) -> None:
    off = OrchestraSettings()
    assert check(monkeypatch, off, None, None) == (OK, "none (bubblewrap is not installed)")
    status, detail = check(monkeypatch, off, "/usr/bin/bwrap", None)
    assert status == OK and detail.startswith("none (/usr/bin/bwrap works here")


@needs_bwrap()
def test_the_real_probe_passes_here() -> None:
    result = doctor_checks._sandbox(BUBBLEWRAP)
    assert result.status == OK, result.detail
