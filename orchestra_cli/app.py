"""The `orchestra` Typer application: registers each command module's function.

Command modules import only typer at module level so `orchestra --help` stays fast; everything heavy is
imported inside the command functions.
"""

from typing import Annotated

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

app = typer.Typer(
    name="orchestra",
    help="Run software-development pipelines written as Graphviz DOT graphs.",
    rich_markup_mode=None,  # rich help formatting costs ~0.2 s of imports on every start
    pretty_exceptions_enable=False,
    add_completion=True,  # --install-completion / --show-completion (bash, zsh, fish, PowerShell)
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},  # inherited by every command
)


def _print_version(value: bool) -> None:
    if value:
        from orchestra_cli.version import version_line

        print(version_line())
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", "-V", callback=_print_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Run software-development pipelines written as Graphviz DOT graphs."""


app.command("init")(init_command.init_project)
app.command("compile")(compile_command.compile_pipeline)
app.command("run")(run_command.run_pipeline)
app.command("resume")(resume_command.resume_pipeline)
app.command("replay")(replay_command.replay_session)
app.command("show")(show_command.show_commit)
app.command("checkout")(checkout_command.checkout_turn)
app.command("status")(status_command.show_status)
app.command("attach")(attach_command.attach_session)
app.command("cleanup")(cleanup_command.cleanup)
app.command("serve")(serve_command.serve)
app.command("doctor")(doctor_command.run_doctor)
app.command("worker")(fleet_command.run_worker)
app.command("submit")(fleet_command.submit_pipeline)
app.command("cancel")(fleet_command.cancel_session)
app.add_typer(mcp_command.app, name="mcp")
