"""`orchestra --version`, `-h` on every command, and Typer's shell completion."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.orchestra_project import orchestra

COMMANDS = [
    ["init"], ["compile"], ["run"], ["resume"], ["replay"], ["show"], ["checkout"], ["status"], ["attach"],
    ["cleanup"], ["doctor"], ["worker"], ["submit"], ["cancel"],
    ["mcp"], ["mcp", "serve"], ["serve"],
]  # fmt: skip


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version(tmp_path: Path, flag: str) -> None:
    result = orchestra(flag, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("orchestra 0.") and "(Python 3." in result.stdout


def test_every_command_is_listed_in_the_help() -> None:
    from typer.main import get_command

    from orchestra_cli.app import app

    commands = set(get_command(app).commands)  # type: ignore[attr-defined]
    assert commands == {name[0] for name in COMMANDS}


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
@pytest.mark.parametrize("flag", ["-h", "--help"])
def test_help_on_every_command(tmp_path: Path, command: list[str], flag: str) -> None:
    result = orchestra(*command, flag, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"Usage: orchestra {' '.join(command)}")
    assert "-h, --help" in result.stdout


def test_root_help_offers_completion(tmp_path: Path) -> None:
    result = orchestra("-h", cwd=tmp_path)
    assert "--install-completion" in result.stdout and "--show-completion" in result.stdout


def test_completion_completes_commands_and_options(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "_ORCHESTRA_COMPLETE": "complete_bash",
        "COMP_WORDS": "orchestra re",
        "COMP_CWORD": "1",
    }
    assert orchestra(cwd=tmp_path, env=env).stdout.split() == ["resume", "replay"]
    env.update(COMP_WORDS="orchestra run --ba", COMP_CWORD="2")
    assert orchestra(cwd=tmp_path, env=env).stdout.split() == ["--backend"]


def test_install_completion_writes_the_bash_script(tmp_path: Path) -> None:
    # Typer detects the user's shell from the process tree (shellingham), which a test runner's tree may not show;
    # with detection off, `--install-completion` takes the shell as its value, the same install path.
    env = {**os.environ, "HOME": str(tmp_path), "SHELL": "/bin/bash", "_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"}
    result = orchestra("--install-completion", "bash", cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    script = (tmp_path / ".bash_completions" / "orchestra.sh").read_text()
    assert "_ORCHESTRA_COMPLETE" in script
    assert "orchestra.sh" in (tmp_path / ".bashrc").read_text()
