"""`orchestra replay SESSION (--checkpoint TURN_ID | --turn TURN_ID)`: fork the session at a turn and run the fork on."""

from typing import Annotated

import typer

from orchestra_cli.options import ConfigOption, JsonOption
from orchestra_cli.runtime.options import (
    AnswersOption,
    AutoApproveOption,
    BackendOption,
    LogsRootOption,
    MaxCostOption,
    MaxTokensOption,
    MaxVisitsOption,
    MaxWallTimeOption,
    PipelineOption,
    QuietOption,
    RollbackOption,
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
    turn: Annotated[
        str | None,
        typer.Option(
            "--turn",
            help="The agent turn to fork at: the fork's agent continues after it (see `orchestra status SESSION`).",
        ),
    ] = None,
    pipeline: PipelineOption = None,
    backend: BackendOption = None,
    auto_approve: AutoApproveOption = False,
    answers: AnswersOption = None,
    set_values: SetOption = None,
    logs_root: LogsRootOption = None,
    max_visits: MaxVisitsOption = None,
    json_output: JsonOption = False,
    quiet: QuietOption = False,
    config: ConfigOption = None,
    rollback_on_failure: RollbackOption = None,
    max_cost: MaxCostOption = None,
    max_tokens: MaxTokensOption = None,
    max_wall_time: MaxWallTimeOption = None,
) -> None:
    """Fork a session at one of its turns into a new session and run on from the checkpoint there.

    The new session shares the history up to that turn (an O(1) fork in the store); the original is left
    untouched. Workspace repos get new session branches starting at the commits recorded at that point.

    With --turn (an AgentTurn id) the fork is made at that agent turn: the new session branches start at the
    turn's commits (a read-only turn: each repo's latest commit before it), the pipeline state is the
    checkpoint's before the turn's node, and the node's agent continues its conversation after the turn, as
    `orchestra resume SESSION --turn` does, in the new session only. Exit status as for `orchestra run`;
    2 for a bad turn id or both options.
    """
    from orchestra_cli.errors import fail
    from orchestra_cli.runtime.execute import run_recorded
    from orchestra_core.runs.start import start_replay

    if checkpoint and turn:
        raise fail("give either --checkpoint TURN_ID or --turn TURN_ID, not both")
    if not checkpoint and not turn:
        raise fail(
            "give the turn to replay from with --checkpoint TURN_ID or --turn TURN_ID (see `orchestra status SESSION`)"
        )
    options = RunOptions(
        pipeline, backend, auto_approve, answers, tuple(set_values or ()), logs_root, max_visits,
        json_output, quiet, config, rollback_on_failure, max_cost, max_tokens, max_wall_time,
    )
    check_run_options(options)
    if turn:
        from orchestra_core.runs.turn_start import start_replay_at_turn

        at = turn
        raise typer.Exit(
            run_recorded(
                options, lambda store: start_replay_at_turn(store, session, at, pipeline), pipeline, session=session
            )
        )
    assert checkpoint is not None
    fork_at = checkpoint
    raise typer.Exit(
        run_recorded(
            options, lambda store: start_replay(store, session, fork_at, pipeline), pipeline, session=session
        )
    )
