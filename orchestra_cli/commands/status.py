"""`orchestra status [SESSION]`: list sessions, or show one session's nodes, agent turns, commits and timing."""

from typing import Annotated

import typer

from orchestra_cli.options import ConfigOption, JsonOption


def show_status(
    session: Annotated[str | None, typer.Argument(help="A session id (see the list without it).")] = None,
    limit: Annotated[int, typer.Option("--limit", help="Most sessions to list.")] = 20,
    all_sessions: Annotated[
        bool, typer.Option(
            "--all",
            help="Also list the sessions of parallel branches and child runs; with SESSION, show every agent turn "
            "(not only the last 50).",
        )
    ] = False,
    json_output: JsonOption = False,
    config: ConfigOption = None,
) -> None:
    """List the most recent sessions, or show one session.

    Without SESSION: a table of sessions, most recently active first (id, pipeline, status, start, duration,
    nodes run, and what a replay was forked from). With SESSION: its node timeline (outcome, attempts,
    duration, agent turns and tokens per node execution, parallel branches included), its last 50 agent turns
    with their commits (every one with --all), each workspace repo's branch and head, its checkpoints (for `replay --checkpoint`) and
    how it ended. Exit status 0, or 2 for an unknown session or a bad config.
    """
    from orchestra_cli.session_commands import status

    raise typer.Exit(status(session, json_output=json_output, config=config, limit=limit, all_sessions=all_sessions))
