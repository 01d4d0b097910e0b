"""`orchestra resume --logs-root DIR [PIPELINE.dot]`: continue a run from its checkpoint.json."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from orchestra_cli.commands.run import (
    AnswersOption,
    AutoApproveOption,
    BackendOption,
    LogsRootOption,
    MaxVisitsOption,
    QuietOption,
    RunOptions,
    SetOption,
    execute,
)
from orchestra_cli.options import ConfigOption, JsonOption


def resume_pipeline(
    target: Annotated[
        str | None,
        typer.Argument(
            help="With --logs-root: the pipeline file (default: the one the run started from).",
            show_default=False,
        ),
    ] = None,
    backend: BackendOption = None,
    auto_approve: AutoApproveOption = False,
    answers: AnswersOption = None,
    set_values: SetOption = None,
    logs_root: LogsRootOption = None,
    max_visits: MaxVisitsOption = None,
    json_output: JsonOption = False,
    quiet: QuietOption = False,
    config: ConfigOption = None,
) -> None:
    """Continue a run from the checkpoint in its run directory; it ends as an uninterrupted run would.

    Finished nodes are not run again. `--set` values override the restored context. Exit status as for
    `orchestra run`.
    """
    from orchestra_cli.errors import fail, user_errors
    from orchestra_core.ports.run_directory import CHECKPOINT_FILE

    if logs_root is None:
        raise fail("give the run directory with --logs-root DIR (resuming by session id needs the session store)")
    with user_errors():
        from orchestra_adapters.filesystem.run_directory import FileRunDirectory

        directory = FileRunDirectory(str(logs_root))
        checkpoint = directory.load_checkpoint()
        if checkpoint is None:
            raise fail(f"{logs_root / CHECKPOINT_FILE}: no checkpoint to resume from")
        manifest = directory.read_manifest()
        if manifest is None:
            raise fail(f"{logs_root}: no manifest.json; is this a run directory?")
        pipeline = Path(target) if target else Path(manifest.source_path) if manifest.source_path else None
        if pipeline is None:
            raise fail("the run directory does not say which pipeline it ran; give the pipeline file")
    options = RunOptions(
        pipeline, backend, auto_approve, answers, tuple(set_values or ()), logs_root, max_visits,
        json_output, quiet, config,
    )
    raise typer.Exit(execute(options, resume=checkpoint, session_id=manifest.session_id))
