"""The command builder of project tools: values are data, never code, never options."""

from __future__ import annotations

import pytest

from orchestra_core.agents.command_tools import CommandArgumentError, expand_command
from orchestra_core.model.settings import ToolCommandSettings, ToolParameterSettings


def command(template: str, /, **defaults: str | None) -> ToolCommandSettings:
    return ToolCommandSettings(template, parameters={name: ToolParameterSettings(default=value) for name, value in defaults.items()})


def test_values_are_shell_quoted_data() -> None:
    settings = command("git log -1 {rev}", rev=None)
    assert expand_command(settings, {"rev": "$(touch /tmp/x)`id`; rm -rf ~"}) == "git log -1 '$(touch /tmp/x)`id`; rm -rf ~'"


@pytest.mark.parametrize("value", ["--output=/tmp/owned", "-o/tmp/x", "-"])
def test_a_value_that_would_be_an_option_is_refused(value: str) -> None:
    with pytest.raises(CommandArgumentError, match="would be read as an option"):
        expand_command(command("git log -1 {rev}", rev=None), {"rev": value})


def test_after_a_double_dash_a_leading_dash_is_data() -> None:
    settings = command("grep -rn -- {pattern} src", pattern=None)
    assert expand_command(settings, {"pattern": "-v"}) == "grep -rn -- -v src"


def test_inside_a_word_a_leading_dash_is_no_option() -> None:
    settings = command("pytest --maxfail={n} -k {expr}", n="1", expr=None)
    assert expand_command(settings, {"n": "-1", "expr": "slow"}) == "pytest --maxfail=-1 -k slow"


@pytest.mark.parametrize("value", ["a\nb", "a\rb", "a\x00b"])
def test_line_breaks_and_nul_are_refused(value: str) -> None:
    with pytest.raises(CommandArgumentError, match="line break or a NUL"):
        expand_command(command("echo {text}", text=None), {"text": value})


def test_the_configurations_default_is_the_authors_and_kept() -> None:
    assert expand_command(command("ls {flags}", flags="-la"), {}) == "ls -la"
    with pytest.raises(CommandArgumentError):
        expand_command(command("ls {flags}", flags="-la"), {"flags": "-R"})
