"""`orchestra show COMMIT`: the session, node and agent turn behind a commit, with the agent's messages and tools."""

from typing import Annotated

import typer

from orchestra_cli.options import ConfigOption, JsonOption, require_config_file


def show_commit(
    commit: Annotated[
        str, typer.Argument(help="The commit: a SHA, a branch, HEAD~2, ... in the repository you are in.")
    ],
    json_output: JsonOption = False,
    config: ConfigOption = None,
) -> None:
    """Trace a commit made by an agent back to its recorded turn.

    Run it inside any workspace repository (its main checkout or a session worktree), even one outside
    the project directory, or in the project directory, whose workspace repos are then asked for the
    commit: the commit's Orchestra trailers name the session, node and turn; the store is
    found through the project around the current directory, then the projects linked in the
    repository's git config (`git config --get-all orchestra.project`). Exit 2 when the commit has no
    Orchestra trailers or no project recorded it (the message says what was tried).
    """
    import sys
    from pathlib import Path

    from orchestra_adapters.container import build_container
    from orchestra_cli.commit_trace import trace_commit
    from orchestra_cli.errors import user_errors

    require_config_file(config)
    with user_errors():
        traced = trace_commit(commit, Path.cwd(), build_container().git(), config)
    from orchestra_cli.commit_view import show_json, show_text

    if json_output:
        from orchestra_cli.output import print_json

        print_json(show_json(traced))
        return
    for line in show_text(traced, shorten=sys.stdout.isatty()):
        typer.echo(line)
