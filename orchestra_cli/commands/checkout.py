"""`orchestra checkout SESSION --turn TURN`: the code as an agent turn left it, in detached worktrees, and the
agent's reasoning at that turn."""

from typing import Annotated

import typer

from orchestra_cli.options import ConfigOption, JsonOption


def checkout_turn(
    session: Annotated[str, typer.Argument(help="The session id (see `orchestra status`).")],
    turn: Annotated[
        str,
        typer.Option(
            "--turn", help="An agent turn id from `orchestra status SESSION` (a parallel branch's turns too)."
        ),
    ],
    repo: Annotated[
        str | None, typer.Option("--repo", help="Only this workspace repo (default: every repo of the session).")
    ] = None,
    json_output: JsonOption = False,
    config: ConfigOption = None,
) -> None:
    """Check out the code as an agent turn left it and print what the agent said and did.

    Each workspace repo gets a worktree with a detached HEAD at .orchestra/checkouts/SESSION/turn-TURN/REPO, at
    the turn's commit (a repo the turn did not write: its latest commit before the turn). Your checkout and
    the session's branches are not touched; `orchestra cleanup` removes these worktrees. Running it again
    reuses them. Exit status 0; 2 for an unknown session, a turn that is not one of its agent turns, or an
    unknown repo.
    """
    from orchestra_cli.checkout_view import checkout

    raise typer.Exit(checkout(session, turn, repo, json_output=json_output, config=config))
