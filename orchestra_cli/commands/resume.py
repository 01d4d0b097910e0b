"""`orchestra resume SESSION` (from the store) or `orchestra resume --logs-root DIR [PIPELINE.dot]`."""

from pathlib import Path
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


def resume_pipeline(
    target: Annotated[
        str | None,
        typer.Argument(
            help="The session id; with --logs-root, the pipeline file instead (default: the recorded one).",
            show_default=False,
        ),
    ] = None,
    turn: Annotated[
        str | None,
        typer.Option(
            "--turn",
            help="Continue after this agent turn (a turn id from `orchestra status SESSION`) instead of the "
            "latest checkpoint.",
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
    """Continue a session from its latest checkpoint; it ends as an uninterrupted run would.

    Finished nodes are not run again; workspace repos go back to the checkpoint's commits first. `--set`
    values override the restored context. With --logs-root, the checkpoint.json of that run directory is
    the starting point instead. A failed run runs its failed node again (a run that failed at an exit's goal
    gates has them checked again); a run that succeeded is reported, not run. A run stopped before its first
    checkpoint starts again from the beginning, in the same session, with the pipeline and --set values its
    start recorded, on its recorded session branch and base.

    With --turn, the run goes back to that agent turn: the pipeline state of the checkpoint before the
    turn's node, every repo at the turn's commit (a read-only turn: the repo's latest commit before it),
    and the node's agent continues its conversation after the turn (LangGraph backend; a CLI agent runs
    the node again from its start). New turns are numbered on from it and commit on top; commits made after
    it stay reachable under refs/orchestra/abandoned/. Exit status as for `orchestra run`; 2 for a turn id
    that is not an agent turn of the session.
    """
    from orchestra_cli.errors import fail

    if logs_root is not None and turn is not None:
        raise fail("--turn resumes a recorded session: give the session id, not --logs-root")
    if logs_root is not None:
        from orchestra_cli.runtime.logs_root_resume import resume_from_logs_root

        file = Path(target) if target else pipeline
        options = _options(file, backend, auto_approve, answers, set_values, logs_root, max_visits,
                           json_output, quiet, config, rollback_on_failure, (max_cost, max_tokens, max_wall_time))
        raise typer.Exit(resume_from_logs_root(options))
    if not target:
        raise fail("give the session id to resume (see `orchestra status`), or --logs-root DIR")
    if target.endswith(".dot") or Path(target).is_file():
        raise fail(
            f"{target!r} is a pipeline file: `orchestra resume` takes a session id (see `orchestra status`); "
            "to resume from a run directory add --logs-root DIR"
        )
    from orchestra_cli.runtime.execute import run_recorded
    from orchestra_core.runs.start import start_resume

    options = _options(pipeline, backend, auto_approve, answers, set_values, None, max_visits,
                       json_output, quiet, config, rollback_on_failure, (max_cost, max_tokens, max_wall_time))
    if turn is not None:
        from orchestra_core.runs.turn_start import start_resume_at_turn

        at = turn
        raise typer.Exit(
            run_recorded(
                options, lambda store: start_resume_at_turn(store, target, at, pipeline), pipeline, session=target
            )
        )
    raise typer.Exit(
        run_recorded(options, lambda store: start_resume(store, target, pipeline), pipeline, session=target)
    )


def _options(pipeline: Path | None, backend: str | None, auto_approve: bool, answers: Path | None,
             set_values: list[str] | None, logs_root: Path | None, max_visits: int | None,
             json_output: bool, quiet: bool, config: Path | None,
             rollback_on_failure: bool | None = None,
             budget: tuple[str | None, str | None, str | None] = (None, None, None)) -> RunOptions:
    options = RunOptions(
        pipeline, backend, auto_approve, answers, tuple(set_values or ()), logs_root, max_visits,
        json_output, quiet, config, rollback_on_failure, *budget,
    )
    check_run_options(options)
    return options
