"""`orchestra run PIPELINE.dot`: validate, create the session, run with live progress, report."""

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
    QuietOption,
    RollbackOption,
    RunOptions,
    SetOption,
)


def run_pipeline(
    pipeline: Annotated[Path, typer.Argument(help="The pipeline's DOT file.")],
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
    """Run a pipeline. Prints the session id first, then progress, then the result.

    Every run is a session in the store (.orchestra/orchestra.db unless orchestra.yaml says otherwise);
    with workspace repos configured, agents work on a session branch and every turn that writes files
    is a commit. Exit status: 0 when the pipeline succeeded, 1 when it failed or has validation errors,
    2 for bad input (unreadable file, DOT syntax error, bad option or config).
    """
    from orchestra_cli.runtime.execute import run_new
    from orchestra_cli.runtime.options import check_run_options

    options = RunOptions(
        pipeline, backend, auto_approve, answers, tuple(set_values or ()), logs_root, max_visits,
        json_output, quiet, config, rollback_on_failure, max_cost, max_tokens, max_wall_time,
    )
    check_run_options(options)
    raise typer.Exit(run_new(options))
