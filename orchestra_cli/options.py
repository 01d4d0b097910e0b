"""Options every command shares."""

from pathlib import Path
from typing import Annotated

import typer

ConfigOption = Annotated[
    Path | None,
    typer.Option("--config", help="orchestra.yaml to use (default: discovered next to the pipeline, then the project, then ~/.orchestra/)."),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Machine-readable JSON on stdout, nothing else there.")]


def require_config_file(config: Path | None) -> None:
    """Exit 2 unless `--config` names a regular file (a FIFO or a device would block or never end).

    Raises:
        typer.Exit: The file is missing or is not a regular file (after printing which).
    """
    if config is None:
        return
    from orchestra_cli.errors import fail
    from orchestra_core.model.input_files import InputFileError, check_regular_file

    if not config.exists():
        raise fail(f"{config}: config file not found")
    try:
        check_regular_file(config)
    except InputFileError as error:
        raise fail(str(error), file=error.path) from None
