"""`orchestra run`: prepare a pipeline, run it with live progress, report the result (also used by resume)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NamedTuple

import typer

from orchestra_cli.options import ConfigOption, JsonOption

if TYPE_CHECKING:
    from orchestra_core.engine.checkpoint import Checkpoint, RunResult
    from orchestra_core.engine.events import EventObserver
    from orchestra_core.handlers.registry import HandlerRegistry
    from orchestra_core.ports.interviewer import Interviewer

BackendOption = Annotated[
    str | None, typer.Option("--backend", help="The codergen backend (default: orchestra.yaml's, else simulate).")
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


class RunOptions(NamedTuple):
    """The options `run` and `resume` share."""

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
) -> None:
    """Run a pipeline. Prints the session id first, then progress, then the result.

    Exit status: 0 when the pipeline succeeded, 1 when it failed or has validation errors, 2 for bad
    input (unreadable file, DOT syntax error, bad option or config).
    """
    options = RunOptions(
        pipeline, backend, auto_approve, answers, tuple(set_values or ()), logs_root, max_visits,
        json_output, quiet, config,
    )
    raise typer.Exit(execute(options))


def execute(options: RunOptions, resume: Checkpoint | None = None, session_id: str | None = None) -> int:
    """Run (or resume, given the checkpoint and its session id) and report; returns the exit code."""
    from orchestra_cli.errors import EXIT_FAILED, EXIT_INTERRUPTED, user_errors

    with user_errors():
        setup = _Setup(options)
        graph = setup.prepare()
        if graph is None:
            return EXIT_FAILED
        session_id = session_id or setup.container.session_id()
        logs_root = str(options.logs_root or setup.default_logs_root(session_id))
        setup.announce(session_id, logs_root)
        engine = setup.engine()
    try:
        result = engine.run(
            graph,
            session_id=session_id,
            logs_root=logs_root,
            initial_context=None if resume is not None else setup.initial_context,
            resume_from=_steered(resume, setup.initial_context),
        )
    except KeyboardInterrupt:
        setup.interrupted(logs_root)
        return EXIT_INTERRUPTED
    setup.report(result)
    return 0 if result.succeeded else EXIT_FAILED


def _steered(checkpoint: Checkpoint | None, overrides: dict[str, str]) -> Checkpoint | None:
    """On resume, `--set` values override the restored context."""
    if checkpoint is None or not overrides:
        return checkpoint
    from attrs import evolve

    return evolve(checkpoint, context={**checkpoint.context, **overrides})


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


class _Setup:
    """Everything a run needs, built from the options through the container."""

    def __init__(self, options: RunOptions) -> None:
        from orchestra_adapters.config.orchestra_yaml import discover_settings
        from orchestra_cli.container import Container
        from orchestra_cli.errors import fail

        self.options = options
        if options.config is not None and not options.config.is_file():
            raise fail(f"{options.config}: config file not found")
        self.initial_context = parse_set_values(options.set_values)
        self.settings = discover_settings(options.pipeline, options.config, Path.cwd())
        self.project_root = self.settings.project_root or Path.cwd()
        self.container = Container()
        self.container.config.from_dict({"backend": options.backend or self.settings.backend or "simulate"})
        self.registry = self._registry()

    def _registry(self) -> HandlerRegistry:
        from orchestra_cli.errors import fail
        from orchestra_core.handlers import build_registry

        name = self.container.config.backend()
        available = sorted(self.container.codergen_backend.providers)
        if name not in available:
            raise fail(f"unknown backend {name!r}; available: {', '.join(available)}")
        return build_registry(
            backend=self.container.codergen_backend(),
            interviewer=self._interviewer(),
            command_runner=self.container.command_runner(),
            workdir=str(self.project_root),
            pipeline_loader=self._load_child,
        )

    def _interviewer(self) -> Interviewer:
        from orchestra_adapters.console.interviewer import ConsoleInterviewer
        from orchestra_core.interview import AutoApproveInterviewer, StageAnswersInterviewer

        fallback: Interviewer = AutoApproveInterviewer() if self.options.auto_approve else ConsoleInterviewer()
        if self.options.answers is None:
            return fallback
        from orchestra_adapters.console.answers_file import load_answers_file

        answers = load_answers_file(self.options.answers)
        return StageAnswersInterviewer(answers, source=str(self.options.answers), fallback=fallback)

    def _load_child(self, path: str) -> Any:
        from orchestra_core.errors import OrchestraError
        from orchestra_core.pipeline import prepare_pipeline
        from orchestra_core.validation import ValidationError

        prepared = prepare_pipeline(path, known_types=self.registry.types)
        if prepared.errors:
            raise OrchestraError(f"child pipeline {path}: {ValidationError(list(prepared.diagnostics))}")
        return prepared.graph

    def prepare(self) -> Any:
        """The transformed graph, or None after printing its validation errors."""
        from orchestra_core.pipeline import prepare_pipeline

        assert self.options.pipeline is not None
        prepared = prepare_pipeline(self.options.pipeline, known_types=self.registry.types)
        shown = prepared.diagnostics if not self.options.quiet else prepared.errors
        for diagnostic in shown:
            fix = f" (fix: {diagnostic.fix})" if diagnostic.fix else ""
            typer.echo(
                f"{self.options.pipeline}: {diagnostic.severity.value} [{diagnostic.rule}] "
                f"{diagnostic.location}: {diagnostic.message}{fix}",
                err=True,
            )
        return None if prepared.errors else prepared.graph

    def default_logs_root(self, session_id: str) -> Path:
        return self.project_root / ".orchestra" / "runs" / session_id

    def announce(self, session_id: str, logs_root: str) -> None:
        if not self.options.json_output:
            typer.echo(f"session {session_id}")
            if not self.options.quiet:
                typer.echo(f"logs    {logs_root}")

    def engine(self) -> Any:
        from orchestra_core.engine.runner import PipelineEngine

        return PipelineEngine(
            self.registry,
            run_directory=self.container.run_directories(),
            clock=self.container.clock(),
            observers=self._observers(),
            max_node_visits=self.options.max_visits,
        )

    def _observers(self) -> list[EventObserver]:
        import sys

        if self.options.quiet:
            return []
        stream = sys.stderr if self.options.json_output else sys.stdout
        if not self.options.json_output and stream.isatty():
            from orchestra_adapters.console.progress import RichProgress
            from orchestra_cli.output import make_console

            return [RichProgress(make_console())]
        from orchestra_adapters.console.progress import PlainProgress

        return [PlainProgress(stream)]

    def interrupted(self, logs_root: str) -> None:
        typer.echo(
            f"orchestra: interrupted; continue with: orchestra resume --logs-root {logs_root} {self.options.pipeline}",
            err=True,
        )

    def report(self, result: RunResult) -> None:
        if self.options.json_output:
            from orchestra_cli.output import print_json

            print_json(run_json(result))
        elif self.options.quiet:
            typer.echo(result.status.value if result.succeeded else f"fail: {result.failure_reason}")


def run_json(result: RunResult) -> dict[str, Any]:
    """The `run --json` document of DESIGN.md (`repos` stays empty until the workspace layer lands)."""
    import json

    return {
        "session_id": result.session_id,
        "status": result.status.value,
        "completed_nodes": list(result.completed_nodes),
        "node_outcomes": {node: outcome.status.value for node, outcome in result.node_outcomes.items()},
        "context": json.loads(json.dumps(dict(result.context), default=str)),
        "logs_root": result.logs_root,
        "repos": {},
    }
