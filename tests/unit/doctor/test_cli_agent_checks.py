"""`orchestra doctor`'s CLI agent lines: found and its version, missing, configured only, never hanging."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from orchestra_cli.doctor_agents import agent_version, cli_agent_checks
from orchestra_cli.doctor_check import ERROR, OK, WARNING
from orchestra_core.model.settings import AcpSettings, CliAgentSettings, OrchestraSettings, PipelineSettings


def _script(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def bin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "bin"
    directory.mkdir()
    monkeypatch.setenv("PATH", f"{directory}{os.pathsep}/usr/bin{os.pathsep}/bin")
    return directory


def test_nothing_configured_or_selected_gives_no_line(bin_dir: Path) -> None:
    _script(bin_dir / "claude", "echo 2.1.0")
    assert cli_agent_checks(OrchestraSettings()) == []


def test_a_selected_agent_found_reports_its_version_and_path(bin_dir: Path) -> None:
    claude = _script(bin_dir / "claude", "echo '2.1.332 (Claude Code)'")
    [check] = cli_agent_checks(OrchestraSettings(backend="claude-code"))
    assert (check.name, check.status, check.detail) == (
        "cli agent claude-code",
        OK,
        f"2.1.332 (Claude Code) ({claude})",
    )


def test_a_selected_agent_missing_is_an_error_a_configured_one_a_warning(bin_dir: Path) -> None:
    settings = OrchestraSettings(
        pipelines={"review": PipelineSettings(backend="codex")},
        cli_agents={"claude-code": CliAgentSettings(command="my-claude")},
    )
    claude, codex = cli_agent_checks(settings)
    assert claude.status == WARNING and claude.detail == (
        "'my-claude' not found (configured but not selected by any backend); "
        "install it or set claude_code.command in orchestra.yaml"
    )
    assert codex.status == ERROR and codex.detail.startswith(
        "'codex' not found (selected by orchestra.yaml's backend)"
    )


def test_a_configured_path_is_used(tmp_path: Path, bin_dir: Path) -> None:
    agent = _script(tmp_path / "tools" / "codex", "echo codex-cli 0.169.0")
    settings = OrchestraSettings(cli_agents={"codex": CliAgentSettings(command=str(agent))})
    [check] = cli_agent_checks(settings)
    assert check.status == OK and check.detail == f"codex-cli 0.169.0 ({agent})"


def test_a_failing_version_is_a_warning(bin_dir: Path) -> None:
    _script(bin_dir / "codex", "echo 'bad flag' >&2; exit 3")
    [check] = cli_agent_checks(OrchestraSettings(backend="codex"))
    assert check.status == WARNING and check.detail.endswith("`--version` exited with 3: bad flag")


def test_a_hung_agent_and_the_child_it_left_holding_the_output_never_hang_doctor(tmp_path: Path) -> None:
    hung = _script(tmp_path / "hung", "sleep 30 &\nsleep 30")
    started = time.monotonic()
    _version, problem = agent_version(str(hung), timeout_s=0.5)
    assert problem == "did not answer within 0.5 s" and time.monotonic() - started < 5
    leaver = _script(tmp_path / "leaver", "sleep 30 &\necho 1.0")
    started = time.monotonic()
    assert agent_version(str(leaver), timeout_s=5) == ("1.0", None)
    assert time.monotonic() - started < 4


def test_the_acp_agent_is_checked_when_configured_or_selected(bin_dir: Path) -> None:
    assert cli_agent_checks(OrchestraSettings()) == []
    [unset] = cli_agent_checks(OrchestraSettings(backend="acp"))
    assert (unset.name, unset.status) == ("acp agent", ERROR) and "acp.command is not set" in unset.detail
    configured = OrchestraSettings(acp=AcpSettings(command=("gemini", "--experimental-acp")))
    [missing] = cli_agent_checks(configured)
    assert missing.status == WARNING and missing.detail.startswith(
        "'gemini' not found (configured but not selected"
    )
    gemini = _script(bin_dir / "gemini", "exit 0")
    [found] = cli_agent_checks(configured)
    assert (found.status, found.detail) == (OK, f"gemini --experimental-acp ({gemini})")
