"""The options `run`, `resume` and `replay` share."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NamedTuple, TypeVar

import typer

if TYPE_CHECKING:
    from orchestra_core.model.budget import Budget

T = TypeVar("T")

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
MaxCostOption = Annotated[
    str | None,
    typer.Option(
        "--max-cost", metavar="USD",
        help="Stop the session once it has spent this many US dollars (over its resumes, replays' history and "
        "parallel branches); the turn in flight finishes. Overrides the graph's max_cost_usd and orchestra.yaml's "
        "budget.max_cost_usd for this run.",
    ),
]
MaxTokensOption = Annotated[
    str | None,
    typer.Option(
        "--max-tokens", metavar="N",
        help="Stop the session once its agent turns used this many tokens (prompt plus completion).",
    ),
]
MaxWallTimeOption = Annotated[
    str | None,
    typer.Option(
        "--max-wall-time", metavar="DURATION",
        help="Stop the session once its runs took this long in all (90m, 2h; time between runs does not count).",
    ),
]
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
    max_cost: str | None = None
    max_tokens: str | None = None
    max_wall_time: str | None = None


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


def run_budget(options: RunOptions) -> Budget | None:
    """The budget `--max-cost`, `--max-tokens` and `--max-wall-time` set (None: none of them).

    Raises:
        typer.Exit: A value is not a positive amount, count or duration (after printing why, naming the option).
    """
    from orchestra_core.model.budget import Budget, parse_cost, parse_tokens, parse_wall_time

    if options.max_cost is None and options.max_tokens is None and options.max_wall_time is None:
        return None
    return Budget(
        _parsed("--max-cost", options.max_cost, parse_cost),
        _parsed("--max-tokens", options.max_tokens, parse_tokens),
        _parsed("--max-wall-time", options.max_wall_time, parse_wall_time),
    )


def _parsed(option: str, value: str | None, parse: Callable[[str], T]) -> T | None:
    from orchestra_cli.errors import fail
    from orchestra_core.model.budget import BudgetValueError

    if value is None:
        return None
    try:
        return parse(value)
    except BudgetValueError as error:
        raise fail(f"{option}: {error}") from None


def check_run_options(options: RunOptions) -> None:
    """Refuse bad file options before anything is built or recorded (bad input never creates a session).

    Raises:
        typer.Exit: `--backend` is not a backend Orchestra has, `--answers` is missing or not a regular file,
            `--logs-root` exists but is not a directory, a `--set` pair is malformed, or a budget option is not a
            positive amount, count or duration (after printing why).
    """
    from orchestra_cli.errors import fail
    from orchestra_core.model.input_files import InputFileError, check_regular_file

    if options.backend is not None:
        from orchestra_adapters.backends.registry import BACKEND_NAMES

        if options.backend not in BACKEND_NAMES:
            known = ", ".join(BACKEND_NAMES)
            raise fail(f"unknown backend {_shorten(options.backend)!r}; available: {known}")
    parse_set_values(options.set_values)
    run_budget(options)
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
