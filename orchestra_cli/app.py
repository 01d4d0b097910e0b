"""The `orchestra` Typer application: registers each command module's function.

Command modules import only typer at module level so `orchestra --help` stays fast; everything heavy is
imported inside the command functions. Typer turns every registered command into a Click command on each
start (reading its signature and copying its parameters' defaults), so a process that runs one command builds
an application of that command alone (`app_for`); `app` has them all.
"""

import os
from collections.abc import Callable, Sequence
from typing import Annotated, Any

import typer

from orchestra_cli.commands import attach as attach_command
from orchestra_cli.commands import checkout as checkout_command
from orchestra_cli.commands import cleanup as cleanup_command
from orchestra_cli.commands import compile as compile_command
from orchestra_cli.commands import doctor as doctor_command
from orchestra_cli.commands import fleet as fleet_command
from orchestra_cli.commands import init as init_command
from orchestra_cli.commands import mcp as mcp_command
from orchestra_cli.commands import replay as replay_command
from orchestra_cli.commands import resume as resume_command
from orchestra_cli.commands import run as run_command
from orchestra_cli.commands import serve as serve_command
from orchestra_cli.commands import show as show_command
from orchestra_cli.commands import status as status_command


def _print_version(value: bool) -> None:
    if value:
        from orchestra_cli.version import version_line

        print(version_line())
        raise typer.Exit()


def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", "-V", callback=_print_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Run software-development pipelines written as Graphviz DOT graphs."""


COMMANDS: dict[str, Callable[..., Any]] = {
    "init": init_command.init_project,
    "compile": compile_command.compile_pipeline,
    "run": run_command.run_pipeline,
    "resume": resume_command.resume_pipeline,
    "replay": replay_command.replay_session,
    "show": show_command.show_commit,
    "checkout": checkout_command.checkout_turn,
    "status": status_command.show_status,
    "attach": attach_command.attach_session,
    "cleanup": cleanup_command.cleanup,
    "serve": serve_command.serve,
    "doctor": doctor_command.run_doctor,
    "worker": fleet_command.run_worker,
    "submit": fleet_command.submit_pipeline,
    "cancel": fleet_command.cancel_session,
}
GROUPS: dict[str, typer.Typer] = {"mcp": mcp_command.app}
# Shell completion (`--show-completion`'s script) asks the program itself for the words it completes.
_COMPLETION_VARIABLE = "_ORCHESTRA_COMPLETE"


def build_app(only: str | None = None) -> typer.Typer:
    """The application with every command, or with only the command or group named `only`."""
    application = typer.Typer(
        name="orchestra",
        help="Run software-development pipelines written as Graphviz DOT graphs.",
        rich_markup_mode=None,  # rich help formatting costs ~0.2 s of imports on every start
        pretty_exceptions_enable=False,
        add_completion=True,  # --install-completion / --show-completion (bash, zsh, fish, PowerShell)
        no_args_is_help=True,
        context_settings={"help_option_names": ["-h", "--help"]},  # inherited by every command
    )
    application.callback()(_root)
    for name, function in COMMANDS.items():
        if only in (None, name):
            application.command(name)(function)
    for name, group in GROUPS.items():
        if only in (None, name):
            application.add_typer(group, name=name)
    return application


def app_for(arguments: Sequence[str]) -> typer.Typer:
    """The application to run `orchestra ARGUMENTS` with: the named command's alone when the arguments start with
    one (the same command, options and messages, at a fraction of the cost), else every command."""
    first = arguments[0] if arguments else None
    if (first in COMMANDS or first in GROUPS) and _COMPLETION_VARIABLE not in os.environ:
        return build_app(first)
    return app


app = build_app()
