"""The command builder of project tools: values are data, never code, never options."""

from __future__ import annotations

import pytest

from orchestra_core.agents.command_template import CommandTemplateError
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


@pytest.mark.parametrize(
    ("template", "where"),
    [
        ('git commit -m "{msg}"', "double quotes"),
        ("echo '{msg}'", "single quotes"),
        ('echo "prefix {msg} suffix"', "double quotes"),
        ("echo \\{msg}", "a backslash"),
    ],
)
def test_a_placeholder_inside_quotes_is_refused_for_the_value_would_be_code_there(template: str, where: str) -> None:
    # `"{msg}"` with msg=$(cmd) became "'$(cmd)'": the outer shell ran cmd
    with pytest.raises(CommandTemplateError, match=f"inside {where}.*write {{msg}} bare"):
        expand_command(command(template, msg=None), {"msg": "$(touch /tmp/owned)"})


@pytest.mark.parametrize(
    "template",
    [
        "git log -1 {a}{rev}",  # an empty value before it: the word still begins with rev
        "git log -1 ''{rev}",  # empty quotes are nothing
        "git log -1 $EMPTY{rev}",  # an expansion may be empty
        "git diff -- {a}; git log -1 {rev}",  # `--` ends the options of `git diff` only
        "git diff -- {a} && git log {rev}",
        "git diff -- {a} | git log {rev}",
        "echo -- $(git log {rev})",
        "echo -- `git log {rev}`",
        "(git log -1 {rev})",
        "git log -1\t{rev}",
    ],
)
def test_a_value_that_begins_a_word_cannot_be_an_option_however_the_template_is_written(template: str) -> None:
    with pytest.raises(CommandArgumentError, match="rev: '--output=/tmp/x' starts with '-'"):
        expand_command(command(template, a=None, rev=None), {"a": "", "rev": "--output=/tmp/x"})


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("git log -1 {a}{rev}", "git log -1 x--output"),
        ("git log '' -- {rev}", "git log '' -- --output"),
        ("git log '--' {rev}", "git log '--' --output"),
        ("git log x{rev}", "git log x--output"),
        ("git log \\ {rev}", "git log \\ --output"),
    ],
)
def test_a_leading_dash_inside_a_word_or_after_a_double_dash_is_data(template: str, expected: str) -> None:
    settings = command(template, a=None, rev=None)
    assert expand_command(settings, {"a": "x", "rev": "--output"}).replace("'x'", "x") == expected


def test_a_quoted_expansion_before_a_value_may_be_empty_too() -> None:
    with pytest.raises(CommandArgumentError, match="starts with '-'"):
        expand_command(command('git log "$X"{rev}', rev=None), {"rev": "--output=/tmp/x"})
