"""The options `run`, `resume` and `replay` share."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, NamedTuple

import typer

BackendOption = Annotated[
    str | None,
    typer.Option("--backend", help="simulate, langgraph or direct (default: orchestra.yaml's, else langgraph "
                 "when providers are configured, else simulate)."),
]
AutoApproveOption = Annotated[
    bool, typer.Option("--auto-approve", help="Answer every human gate with its first choice.")
]
AnswersOption = Annotated[
    Path | None,
    typer.Option("--answers", help="YAML file of answers per human-gate node id (see docs/running.md)."),
]
SetOption = Annotated[
    list[str] | None, typer.Option("--set", help="Start with context value KEY=VALUE (repeatable).")
]
LogsRootOption = Annotated[
    Path | None, typer.Option("--logs-root", help="The run directory (default: .orchestra/runs/<session-id>).")
]
MaxVisitsOption = Annotated[
    int | None,
    typer.Option("--max-visits", min=1, help="Stop as looping after this many node executions (default 10000)."),
]
QuietOption = Annotated[bool, typer.Option("--quiet", "-q", help="No progress output.")]
PipelineOption = Annotated[
    Path | None,
    typer.Option("--pipeline", help="Continue with this pipeline file instead of the recorded one."),
]


class RunOptions(NamedTuple):
    """What a run was asked to do."""

    pipeline: Path | None
    backend: str | None = None
    auto_approve: bool = False
    answers: Path | None = None
    set_values: tuple[str, ...] = ()
    logs_root: Path | None = None
    max_visits: int | None = None
    json_output: bool = False
    quiet: bool = False
    config: Path | None = None


def parse_set_values(values: tuple[str, ...]) -> dict[str, str]:
    """`KEY=VALUE` pairs from `--set`.

    Raises:
        typer.Exit: A pair without `=` or with an empty key (after printing why).
    """
    from orchestra_cli.errors import fail

    parsed: dict[str, str] = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise fail(f"--set expects KEY=VALUE, got {item!r}")
        parsed[key.strip()] = value
    return parsed
