"""`app_for`: a process running one command builds that command alone, and behaves exactly as with them all."""

import pytest
from typer.testing import CliRunner

from orchestra_cli.app import COMMANDS, GROUPS, app, app_for


def _registered(application: object) -> set[str]:
    commands = {command.name for command in application.registered_commands}  # type: ignore[attr-defined]
    groups = {group.name for group in application.registered_groups}  # type: ignore[attr-defined]
    return commands | groups


@pytest.mark.parametrize("name", sorted([*COMMANDS, *GROUPS]))
def test_a_command_runs_in_an_application_of_its_own(name: str) -> None:
    assert _registered(app_for([name, "--json"])) == {name}


@pytest.mark.parametrize(
    "arguments",
    [[], ["--help"], ["-h"], ["--version"], ["--install-completion"], ["bogus"], ["--json", "run"], ["Run"]],
)
def test_anything_else_gets_every_command(arguments: list[str]) -> None:
    assert app_for(arguments) is app


def test_shell_completion_gets_every_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("_ORCHESTRA_COMPLETE", "complete_bash")
    assert app_for(["run"]) is app


@pytest.mark.parametrize(
    "arguments",
    [
        ["run", "--help"],
        ["status", "--help"],
        ["mcp", "--help"],
        ["mcp", "serve", "--help"],
        ["run"],  # a missing argument
        ["status", "--limit", "many"],  # a bad value
        ["run", "p.dot", "--no-such-option"],
        ["--version"],
    ],
)
def test_output_and_exit_code_match_the_full_application(arguments: list[str]) -> None:
    runner = CliRunner()
    alone = runner.invoke(app_for(arguments), arguments, prog_name="orchestra")
    full = runner.invoke(app, arguments, prog_name="orchestra")
    assert (alone.exit_code, alone.output) == (full.exit_code, full.output)
