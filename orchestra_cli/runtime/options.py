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
RollbackOption = Annotated[
    bool | None,
    typer.Option(
        "--rollback-on-failure/--no-rollback-on-failure",
        help="After a failed run, put every workspace repo back as it was (session branch and worktrees "
        "removed, the commits kept under refs/orchestra/abandoned/); default: orchestra.yaml's "
        "workspace.rollback. An interrupted run is never rolled back.",
        show_default=False,
    ),
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
    rollback_on_failure: bool | None = None


MAX_SET_KEY_CHARS = 256  # a context key; values are bounded as every argument is (docs/cli.md)


def parse_set_values(values: tuple[str, ...]) -> dict[str, str]:
    """`KEY=VALUE` pairs from `--set`.

    Raises:
        typer.Exit: A pair without `=`, with an empty key or a key over MAX_SET_KEY_CHARS (after printing
            why).
    """
    from orchestra_cli.errors import fail

    parsed: dict[str, str] = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise fail(f"--set expects KEY=VALUE, got {_shorten(item)!r}")
        if len(key.strip()) > MAX_SET_KEY_CHARS:
            raise fail(f"--set key {_shorten(key.strip())!r} is longer than {MAX_SET_KEY_CHARS} characters")
        parsed[key.strip()] = value
    return parsed


def _shorten(text: str) -> str:
    return text if len(text) <= 60 else text[:60] + "..."


def check_run_options(options: RunOptions) -> None:
    """Refuse bad file options before anything is built or recorded (bad input never creates a session).

    Raises:
        typer.Exit: `--backend` is not a backend Orchestra has, `--answers` is missing or not a regular file,
            `--logs-root` exists but is not a directory, or a `--set` pair is malformed (after printing why).
    """
    from orchestra_cli.errors import fail
    from orchestra_core.model.input_files import InputFileError, check_regular_file

    if options.backend is not None:
        from orchestra_adapters.backends.registry import BACKEND_NAMES

        if options.backend not in BACKEND_NAMES:
            known = ", ".join(BACKEND_NAMES)
            raise fail(f"unknown backend {_shorten(options.backend)!r}; available: {known}")
    parse_set_values(options.set_values)
    if options.answers is not None and options.answers.exists():
        try:
            check_regular_file(options.answers)
        except InputFileError as error:
            raise fail(f"{options.answers}: cannot read the answers file: {error.detail}") from None
    root = options.logs_root
    if root is not None and root.exists() and not root.is_dir():
        raise fail(f"{root}: --logs-root must be a directory (or not exist yet)", file=str(root))


def make_logs_root(root: Path | None) -> None:
    """Create the `--logs-root` directory, once the run's checks have passed and before its session exists,
    so a directory that cannot be made is bad input that records nothing.

    Raises:
        typer.Exit: The directory cannot be created (after printing why, on one line).
    """
    from orchestra_cli.errors import fail

    if root is None:
        return
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise fail(f"{root}: --logs-root cannot be created: {error.strerror or error}", file=str(root)) from None
