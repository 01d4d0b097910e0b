"""The flow every running command shares: start a session, assemble the run, run it, report it."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from orchestra_cli.runtime.options import RunOptions, parse_set_values

if TYPE_CHECKING:
    from orchestra_cli.runtime.assembly import RunAssembly
    from orchestra_cli.runtime.session_start import SessionStart
    from orchestra_core.model.checkpoint import RunResult
    from orchestra_core.model.graph import Graph

StartSession = Callable[[Any], "SessionStart"]


def run_new(options: RunOptions) -> int:
    """`orchestra run`: validate the pipeline, then create its session and run it."""
    from orchestra_cli.errors import EXIT_FAILED, user_errors
    from orchestra_core.graph.dot_loader import read_pipeline_text

    assert options.pipeline is not None
    with user_errors():
        container = make_container(options, options.pipeline)
        text = read_pipeline_text(options.pipeline)
        graph = prepare_graph(text, options.pipeline, options)
        if graph is None:
            return EXIT_FAILED
        check_run_providers(container, options, graph)

    def start(store: Any) -> SessionStart:
        from orchestra_cli.runtime.session_start import start_new

        assert options.pipeline is not None
        return start_new(store, graph, options.pipeline, text)

    return execute(options, container, start, graph)


def run_recorded(options: RunOptions, start: StartSession, pipeline: Path | None) -> int:
    """`orchestra resume SESSION` and `orchestra replay`: continue from a recorded checkpoint."""
    from orchestra_cli.errors import EXIT_FAILED, user_errors
    from orchestra_cli.runtime.session_start import begin

    with user_errors():
        container = make_container(options, pipeline)
        store = container.session_store()
        begun = start(store)
        finished = _already_finished(begun, options, container)
        if finished is not None:
            return finished
        path = Path(begun.source.path) if begun.source.path else Path("pipeline.dot")
        graph = prepare_graph(begun.pipeline_text, path, options)
        if graph is None:
            return EXIT_FAILED
        check_run_providers(container, options, graph)
    return execute(options, container, lambda store: begin(store, begun), graph)


def _already_finished(begun: SessionStart, options: RunOptions, container: Any) -> int | None:
    """A resume of a session that already ended reports how it ended (the run's JSON with --json) instead of
    running again."""
    from orchestra_cli.runtime.assembly import logs_root_for
    from orchestra_cli.runtime.session_start import RESUME
    from orchestra_core.model.checkpoint import RunResult, RunStatus

    checkpoint = begun.checkpoint
    if begun.kind != RESUME or checkpoint is None or checkpoint.status == RunStatus.RUNNING:
        return None
    if options.json_output:
        from orchestra_cli.output import print_json

        logs_root = logs_root_for(options, container.project_root(), begun.session_id)
        result = RunResult.from_checkpoint(checkpoint, session_id=begun.session_id, logs_root=logs_root)
        repos = {
            name: {"branch": head.branch, "base_sha": head.base_sha, "head_sha": head.sha}
            for name, head in begun.repo_heads.items()
        }
        print_json(run_json(result, repos))
    else:
        reason = f": {checkpoint.failure_reason}" if checkpoint.failure_reason else ""
        typer.echo(f"session {begun.session_id} already ended ({checkpoint.status.value}{reason}); nothing to resume")
    return 0 if checkpoint.status == RunStatus.SUCCESS else 1


def execute(options: RunOptions, container: Any, start: StartSession, graph: Graph) -> int:
    """Start the session, set up its workspace, run the engine and report; returns the exit code."""
    from orchestra_cli.errors import EXIT_FAILED, EXIT_INTERRUPTED, user_errors
    from orchestra_cli.runtime.assembly import RunAssembly
    from orchestra_core.session.api import publish_types

    with user_errors():
        initial_context = parse_set_values(options.set_values)
        store = container.session_store()
        publish_types(store)
        begun = start(store)
        assembly = RunAssembly(options, container, graph, begun)
        _announce(assembly)
        engine = _prepare_engine(assembly, options)
    try:
        result = assembly.run(engine, initial_context)
    except KeyboardInterrupt:
        assembly.record_failure("interrupted", interrupted=True)
        typer.echo(f"orchestra: interrupted; continue with: orchestra resume {assembly.session_id}", err=True)
        return EXIT_INTERRUPTED
    finally:
        assembly.close()
    _report(options, result, assembly)
    return 0 if result.succeeded else EXIT_FAILED


def make_container(options: RunOptions, pipeline: Path | None) -> Any:
    """The composition root configured for this command."""
    from orchestra_cli.container import Container
    from orchestra_cli.errors import fail

    if options.config is not None and not options.config.is_file():
        raise fail(f"{options.config}: config file not found")
    container = Container()
    container.config.from_dict(
        {
            "pipeline_path": str(pipeline) if pipeline else None,
            "config_path": str(options.config) if options.config else None,
            "cwd": str(Path.cwd()),
            "backend": options.backend,
        }
    )
    return container


def prepare_graph(text: str, path: Path, options: RunOptions) -> Graph | None:
    """The transformed graph, or None after printing its validation errors."""
    from orchestra_core.graph.dot_loader import parse_dot
    from orchestra_core.pipeline import prepare_pipeline

    prepared = prepare_pipeline(parse_dot(text, path=str(path)))
    shown = prepared.diagnostics if not options.quiet else prepared.errors
    for diagnostic in shown:
        fix = f" (fix: {diagnostic.fix})" if diagnostic.fix else ""
        typer.echo(
            f"{path}: {diagnostic.severity.value} [{diagnostic.rule}] {diagnostic.location}: "
            f"{diagnostic.message}{fix}",
            err=True,
        )
    return None if prepared.errors else prepared.graph


def check_run_providers(container: Any, options: RunOptions, graph: Graph) -> None:
    """Fail before a session exists when the backend's providers cannot work.

    Raises:
        OrchestraError: Unknown backend, unresolvable model, missing API key or provider package.
    """
    from orchestra_cli.runtime.assembly import SIMULATE, backend_name

    name = backend_name(options, container.settings(), graph)
    if name == SIMULATE:
        return
    from orchestra_adapters.backends.registry import BACKEND_NAMES, UnknownBackendError
    from orchestra_adapters.llm.providers import check_providers

    if name not in BACKEND_NAMES:
        raise UnknownBackendError(f"unknown backend {name!r}; available: {', '.join(BACKEND_NAMES)}")
    resolver = container.agent_resolver()
    used = {
        resolver.model_for(node, graph).provider
        for node in graph.nodes.values()
        if node.handler_type in ("codergen", "parallel.fan_in")
    }
    check_providers(container.settings(), used)


def _prepare_engine(assembly: RunAssembly, options: RunOptions) -> Any:
    observers = _observers(options)
    assembly.progress = [observer for observer in observers if hasattr(observer, "note")]
    try:
        assembly.open_workspace()
        return assembly.engine(_interviewer(options), observers)
    except BaseException as error:
        assembly.record_failure(str(error) or type(error).__name__)
        assembly.close()
        raise


def _announce(assembly: RunAssembly) -> None:
    if assembly.options.json_output:
        return
    typer.echo(f"session {assembly.session_id}")
    if assembly.start.origin is not None:
        source, turn = assembly.start.origin
        typer.echo(f"replay  of session {source} from turn {turn}")
    if not assembly.options.quiet:
        typer.echo(f"logs    {assembly.logs_root()}")


def _interviewer(options: RunOptions) -> Any:
    from orchestra_adapters.console.interviewer import ConsoleInterviewer
    from orchestra_core.interview import AutoApproveInterviewer, StageAnswersInterviewer

    fallback: Any = AutoApproveInterviewer() if options.auto_approve else ConsoleInterviewer()
    if options.answers is None:
        return fallback
    from orchestra_adapters.console.answers_file import load_answers_file

    answers = load_answers_file(options.answers)
    return StageAnswersInterviewer(answers, source=str(options.answers), fallback=fallback)


def _observers(options: RunOptions) -> list[Any]:
    if options.quiet:
        return []
    stream = sys.stderr if options.json_output else sys.stdout
    if not options.json_output and stream.isatty():
        from orchestra_adapters.console.progress import RichProgress
        from orchestra_cli.output import make_console

        return [RichProgress(make_console())]
    from orchestra_adapters.console.progress import PlainProgress

    return [PlainProgress(stream)]


def _report(options: RunOptions, result: RunResult, assembly: RunAssembly) -> None:
    if options.json_output:
        from orchestra_cli.output import print_json

        print_json(run_json(result, assembly.repos_json()))
        return
    if options.quiet:
        typer.echo(result.status.value if result.succeeded else f"fail: {result.failure_reason}")
        return
    for name, repo in assembly.repos_json().items():
        typer.echo(f"repo    {name}: branch {repo['branch']} at {repo['head_sha'][:12]}")


def run_json(result: RunResult, repos: dict[str, dict[str, str]]) -> dict[str, Any]:
    """The `run --json` document of DESIGN.md."""
    import json

    return {
        "session_id": result.session_id,
        "status": result.status.value,
        "completed_nodes": list(result.completed_nodes),
        "node_outcomes": {node: outcome.status.value for node, outcome in result.node_outcomes.items()},
        "context": json.loads(json.dumps(dict(result.context), default=str)),
        "logs_root": result.logs_root,
        "repos": repos,
    }
