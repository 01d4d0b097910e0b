"""`orchestra status [SESSION]`: list sessions, or show one session's nodes, agent turns, commits and timing."""

from typing import Annotated

import typer

from orchestra_cli.options import ConfigOption, JsonOption


def show_status(
    session: Annotated[str | None, typer.Argument(help="A session id (see the list without it).")] = None,
    limit: Annotated[
        int | None,
        typer.Option(
            "--limit",
            help="Most sessions to list (default 20); with SESSION, most turns in a page (--json, --after) or agent "
            "turns shown (default 50).",
        ),
    ] = None,
    after: Annotated[
        str | None,
        typer.Option(
            "--after",
            metavar="TURN",
            help="With SESSION: the page of turns after this turn id (the `next_after` of the page before).",
        ),
    ] = None,
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
    how it ended. With SESSION and --limit N or --after TURN, --json gives one page of its turns (oldest first,
    at most N, default 50) and `next_after`, the --after of the next page; text lists the page's turns. Exit
    status 0, or 2 for an unknown session or turn, a bad value or a bad config.
    """
    from orchestra_cli.session_commands import status

    raise typer.Exit(
        status(
            session, json_output=json_output, config=config, limit=limit, all_sessions=all_sessions, after=after
        )
    )
