"""`orchestra compile`: parse, transform and validate a pipeline; print its diagnostics."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from orchestra_cli.options import ConfigOption, JsonOption


def compile_pipeline(
    pipeline: Annotated[Path, typer.Argument(help="The pipeline's DOT file.")],
    json_output: JsonOption = False,
    config: ConfigOption = None,
) -> None:
    """Parse, transform and validate a pipeline; print its diagnostics."""
    from orchestra_cli.errors import user_errors
    from orchestra_core.graph import load_pipeline

    with user_errors():
        load_pipeline(pipeline)
