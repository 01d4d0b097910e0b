"""Options every command shares."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

ConfigOption = Annotated[
    Path | None,
    typer.Option("--config", help="orchestra.yaml to use (default: discovered next to the pipeline, then the project, then ~/.orchestra/)."),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Machine-readable JSON on stdout, nothing else there.")]
