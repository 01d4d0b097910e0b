"""`orchestra attach SESSION`: follow a running session's turns as they land."""

from typing import Annotated

import typer

from orchestra_cli.options import ConfigOption, JsonOption


def attach_session(
    session: Annotated[str, typer.Argument(help="The session to follow (see `orchestra status`).")],
    interval: Annotated[
        float, typer.Option("--interval", help="Seconds between polls of the store.")
    ] = 0.2,
    json_output: JsonOption = False,
    config: ConfigOption = None,
) -> None:
    """Print a session's turns, then follow it live until the run ends (or Ctrl-C).

    One line per turn: nodes starting and finishing (outcome, duration), agent turns with their tools and
    commit, human questions and answers, checkpoints, parallel branches (their turns prefixed with the
    branch). With --json, one JSON object per turn and line. A finished session's history is printed and
    the command exits. Exit status: 0 when the run succeeded (or on Ctrl-C), 1 when it failed or was
    interrupted, 2 for an unknown session.
    """
    from orchestra_cli.session_commands import attach

    raise typer.Exit(attach(session, json_output=json_output, config=config, interval=interval))
