"""`orchestra replay SESSION --checkpoint TURN_ID`: fork the session at a turn and run the fork on."""

from __future__ import annotations

from typing import Annotated

import typer

from orchestra_cli.options import ConfigOption, JsonOption
from orchestra_cli.runtime.options import (
    AnswersOption,
    AutoApproveOption,
    BackendOption,
    MaxVisitsOption,
    PipelineOption,
    QuietOption,
    RunOptions,
    SetOption,
    check_run_options,
)


def replay_session(
    session: Annotated[str, typer.Argument(help="The session to replay (see `orchestra status`).")],
    checkpoint: Annotated[
        str | None,
        typer.Option("--checkpoint", help="The turn to fork at: a Checkpoint turn id (see `orchestra status SESSION`)."),
    ] = None,
    pipeline: PipelineOption = None,
    backend: BackendOption = None,
    auto_approve: AutoApproveOption = False,
    answers: AnswersOption = None,
    set_values: SetOption = None,
    max_visits: MaxVisitsOption = None,
    json_output: JsonOption = False,
    quiet: QuietOption = False,
    config: ConfigOption = None,
) -> None:
    """Fork a session at one of its turns into a new session and run on from the checkpoint there.

    The new session shares the history up to that turn (an O(1) fork in the store); the original is left
    untouched. Workspace repos get new session branches starting at the commits recorded at that point.
    Exit status as for `orchestra run`.
    """
    from orchestra_cli.errors import fail
    from orchestra_cli.runtime.execute import run_recorded
    from orchestra_core.runs.start import start_replay

    if not checkpoint:
        raise fail("give the turn to replay from with --checkpoint TURN_ID (see `orchestra status SESSION`)")
    options = RunOptions(
        pipeline, backend, auto_approve, answers, tuple(set_values or ()), None, max_visits,
        json_output, quiet, config,
    )
    check_run_options(options)
    raise typer.Exit(
        run_recorded(
            options, lambda store: start_replay(store, session, checkpoint, pipeline), pipeline, session=session
        )
    )
