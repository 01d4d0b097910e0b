"""The flow every running command shares: start a session, run it through the core, report it."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from orchestra_cli.runtime.options import RunOptions, parse_set_values, run_budget

if TYPE_CHECKING:
    from orchestra_adapters.console.cancel_watch import CancelWatch
    from orchestra_adapters.container import Container
    from orchestra_adapters.dispatch.run_registration import FleetRun
    from orchestra_core.model.cancellation import Cancellation
    from orchestra_core.model.checkpoint import RunResult
    from orchestra_core.model.graph import Graph
    from orchestra_core.ports.session_store import SessionStore
    from orchestra_core.runs.pipeline_run import PipelineRun
    from orchestra_core.runs.start import SessionStart
    from orchestra_core.validation import Diagnostic, LintRule

StartSession = Callable[["SessionStore"], "SessionStart"]
SIMULATE = "simulate"


def run_new(options: RunOptions) -> int:
    """`orchestra run`: validate the pipeline, then create its session and run it."""
    from orchestra_cli.errors import EXIT_FAILED, user_errors
    from orchestra_core.graph.dot_loader import read_pipeline_text

    assert options.pipeline is not None
    pipeline = options.pipeline
    with user_errors():
        container = make_container(options, pipeline)
        text = read_pipeline_text(pipeline)
        graph = prepare_graph(text, pipeline, options, rules=container.run_rules())
        if graph is None:
            return EXIT_FAILED
        check_run_providers(container, options, graph)

    def start(store: SessionStore) -> SessionStart:
        from orchestra_core.runs.start import start_new

        return start_new(store, graph, pipeline, text)

    return execute(options, container, start, graph)


def run_recorded(options: RunOptions, start: StartSession, pipeline: Path | None, *, session: str) -> int:
    """`orchestra resume SESSION` and `orchestra replay`: continue from a recorded checkpoint.

    An unknown `session` is bad input (exit 2) that creates nothing: no store, no `.orchestra/`, no lock.
    """
    from orchestra_cli.errors import EXIT_FAILED, user_errors

    with user_errors():
        container = make_container(options, pipeline)
        begun = start(existing_store(container, session))
        finished = _already_finished(begun, options, container)
        if finished is not None:
            return finished
        path = Path(begun.source.path) if begun.source.path else Path("pipeline.dot")
        graph = prepare_graph(begun.pipeline_text, path, options, rules=container.run_rules())
        if graph is None:
            return EXIT_FAILED
        check_run_providers(container, options, graph)
    return execute(options, container, lambda _store: begun, graph)


def existing_store(container: Container, session: str) -> SessionStore:
    """The container's session store, opened only when it is already there (opening a SQLite store creates it).

    Raises:
        SessionNotFoundError: There is no store yet, so no `session` in it.
    """
    from orchestra_adapters.storage.factory import store_location
    from orchestra_core.model.store_errors import SessionNotFoundError

    location, exists = store_location(container.settings().storage, container.project_root())
    if not exists:
        raise SessionNotFoundError(f"no session {session!r}: there is no session store at {location} yet")
    return container.session_store()


def _already_finished(begun: SessionStart, options: RunOptions, container: Container) -> int | None:
    """A resume of a session that already succeeded reports that (the run's JSON with --json) instead of
    running again (see `already_succeeded`)."""
    from orchestra_core.model.checkpoint import RunResult
    from orchestra_core.model.layout import ProjectLayout

    checkpoint = begun.checkpoint
    if checkpoint is None or not already_succeeded(begun, container):
        return None
    if options.json_output:
        from orchestra_cli.output import print_json

        logs_root = str(options.logs_root or ProjectLayout(container.project_root()).run_dir(begun.session_id))
        result = RunResult.from_checkpoint(checkpoint, session_id=begun.session_id, logs_root=logs_root)
        repos = {
            name: {"branch": head.branch, "base_sha": head.base_sha, "head_sha": head.sha}
            for name, head in begun.repo_heads.items()
        }
        print_json(run_json(result, repos))
    else:
        typer.echo(nothing_to_resume(begun))
    return 0


def execute(options: RunOptions, container: Container, start: StartSession, graph: Graph) -> int:
    """Start the session, set up its workspace, run the engine and report; returns the exit code."""
    from orchestra_adapters.collector import setup_frozen
    from orchestra_adapters.container import close_container
    from orchestra_cli.errors import EXIT_FAILED, EXIT_INTERRUPTED, fail, user_errors
    from orchestra_cli.runtime.options import make_logs_root
    from orchestra_core.model.cancellation import Cancellation
    from orchestra_core.model.errors import OrchestraError

    fleet = None
    since = time.time()  # a cancel request older than this run (its session lock) is an earlier run's
    try:
        try:
            with user_errors():
                make_logs_root(options.logs_root)
                fleet = _fleet(container)
                stop = fleet.stop if fleet is not None else Cancellation("the run was cancelled")
                run = _begin(options, container, start, graph, fleet, stop)
        except _SetupInterrupted as stopped:  # recorded as interrupted: resumable, from the beginning
            typer.echo(f"orchestra: interrupted; continue with: orchestra resume {stopped.session_id}", err=True)
            return EXIT_INTERRUPTED
        cancelled: str | None = None
        watch = _watch_cancel_requests(run, stop, since)
        try:
            if fleet is not None:
                fleet.start(run)
            with setup_frozen():
                result = run.execute(stop=stop)
        except KeyboardInterrupt:
            typer.echo(f"orchestra: interrupted; continue with: orchestra resume {run.session_id}", err=True)
            return EXIT_INTERRUPTED
        except OrchestraError as error:  # the run recorded its session as failed
            raise fail(f"session {run.session_id} failed: {error}", EXIT_FAILED) from None
        finally:
            cancelled = _end_cancel_watch(run, watch)
            if fleet is not None and fleet.end(run):
                cancelled = "cancelled (orchestra cancel)"
            run.close()
            _remove_attach_channel(run)
        if cancelled:
            resume = f"continue with: orchestra resume {run.session_id}"
            raise fail(f"session {run.session_id} {cancelled}; {resume}", EXIT_FAILED)
        _report(options, result, run)
        return 0 if result.succeeded else exit_code(result)
    finally:
        if fleet is not None:
            fleet.fleet.close()
        close_container(container)


def _watch_cancel_requests(run: PipelineRun, stop: Cancellation, since: float) -> CancelWatch:
    """Watch the run's attach channel for a cancel asked from another process (`orchestra cancel`, the control
    MCP server, the web view)."""
    from orchestra_adapters.console.cancel_watch import CancelWatch
    from orchestra_adapters.console.run_channel import RunChannel, channel_dir

    watch = CancelWatch(RunChannel(channel_dir(run.layout.state_dir, run.session_id)), stop, since)
    watch.start()
    return watch


def _end_cancel_watch(run: PipelineRun, watch: CancelWatch) -> str | None:
    """Stop watching; a run a request cancelled is recorded `cancelled` with where from (before its lock goes,
    so whoever asked sees it ended so). The reason, when it was cancelled."""
    from orchestra_core.model.records import LifecycleEvent, PipelineLifecycle
    from orchestra_core.session.api import append_record

    reason = watch.end()
    if reason is not None and run.ports.store is not None:
        with suppress(Exception):
            append_record(run.ports.store, run.session_id, PipelineLifecycle(
                LifecycleEvent.CANCELLED, run.pipeline_name, error=reason,
            ))  # fmt: skip
    return reason


def _fleet(container: Container) -> FleetRun | None:
    """With a fleet configured (`dispatch.broker`), what the run needs of it: its broker and ledger checked now
    (bad config or an unreachable server: exit 2, nothing recorded)."""
    settings = container.settings()
    if not settings.dispatch.fleet:
        return None
    from orchestra_adapters.dispatch.fleet import Fleet
    from orchestra_adapters.dispatch.run_registration import FleetRun

    return FleetRun(Fleet(settings))


def _begin(
    options: RunOptions,
    container: Container,
    start: StartSession,
    graph: Graph,
    fleet: FleetRun | None = None,
    stop: Cancellation | None = None,
) -> PipelineRun:
    """The run with its session begun, its lock held and its workspace and engine set up."""
    from orchestra_adapters.console.live_activity import ActivityWriter
    from orchestra_adapters.container import run_arguments
    from orchestra_cli.runtime.progress_feed import ProgressFeed
    from orchestra_core.model.layout import ProjectLayout
    from orchestra_core.runs.pipeline_run import PipelineRun
    from orchestra_core.runs.ports import RunOptions as CoreRunOptions
    from orchestra_core.runs.ports import RunPorts

    initial_context = parse_set_values(options.set_values)
    interviewer, console = _interviewer(options)
    arguments = run_arguments(container, interviewer=interviewer, graph=graph)
    project_root = arguments.pop("project_root")
    # the agents' live activity, for `orchestra serve` to show on the session's page (transient, bounded)
    live = ActivityWriter(ProjectLayout(Path(project_root)).state_dir)
    run_options = CoreRunOptions(
        settings=arguments.pop("settings"),
        project_root=project_root,
        logs_root=str(options.logs_root) if options.logs_root else None,
        initial_context=initial_context,
        max_node_visits=options.max_visits,
        on_event=ProgressFeed([*_observers(options), live]),
        rollback_on_failure=options.rollback_on_failure,
        answer_routes=_answer_routes(arguments["notifier"], console),
        budget=run_budget(options),
    )
    ports = RunPorts(**arguments, fleet=fleet.ports() if fleet is not None else None)
    assert ports.store is not None
    run = PipelineRun(graph, start(ports.store), ports, run_options)
    _announce(run, options)
    if console is not None:  # `orchestra attach SESSION` answers what the console waits for
        from orchestra_adapters.console.run_channel import RunChannel, channel_dir

        console.channel = RunChannel(channel_dir(run.layout.state_dir, run.session_id))
        console.stop = stop  # a cancel releases the question it waits at
    try:
        return run.open()
    except KeyboardInterrupt:
        run.close()
        _remove_attach_channel(run)
        raise _SetupInterrupted(run.session_id) from None
    except BaseException:
        run.close()
        raise


def _answer_routes(notifier: Any, console: Any) -> Any:
    """Where `needs_input` notifications say a waiting question is answered: `orchestra attach` reaches a run
    with a console (not one with --auto-approve). None without notifications (nothing of them is imported)."""
    if notifier is None:
        return None
    from orchestra_core.model.notifications import AnswerRoutes

    return AnswerRoutes(attach=console is not None)


class _SetupInterrupted(Exception):
    """Ctrl-C while the run set up its workspace and backend (its session records it interrupted)."""

    def __init__(self, session_id: str) -> None:
        super().__init__(session_id)
        self.session_id = session_id


def _remove_attach_channel(run: PipelineRun) -> None:
    """The run no longer waits for anyone: its `orchestra attach` channel directory goes (if it has one)."""
    from orchestra_adapters.console.run_channel import RunChannel, channel_dir

    RunChannel(channel_dir(run.layout.state_dir, run.session_id)).remove()


def make_container(options: RunOptions, pipeline: Path | None) -> Container:
    """The composition root configured for this command."""
    from orchestra_adapters.container import build_container
    from orchestra_cli.options import require_config_file

    require_config_file(options.config)
    return build_container(config_path=options.config, pipeline_path=pipeline, backend=options.backend)


def prepare_graph(text: str, path: Path, options: RunOptions, rules: Sequence[LintRule] = ()) -> Graph | None:
    """The transformed graph, or None after printing its validation errors (`rules`: extra lint rules)."""
    from orchestra_core.graph.dot_loader import parse_dot
    from orchestra_core.pipeline import prepare_pipeline

    prepared = prepare_pipeline(parse_dot(text, path=str(path)), extra_rules=rules)
    shown = prepared.diagnostics if not options.quiet else prepared.errors
    for diagnostic in shown:
        fix = f" (fix: {diagnostic.fix})" if diagnostic.fix else ""
        typer.echo(
            f"{path}: {diagnostic.severity.value} [{diagnostic.rule}] {diagnostic.location}: "
            f"{diagnostic.message}{fix}",
            err=True,
        )
    if prepared.errors:
        _record_validation_errors(path, prepared.errors)
        return None
    return prepared.graph


def _record_validation_errors(path: Path, errors: Sequence[Diagnostic]) -> None:
    """The last line on stderr, and the `{"error": ...}` document `--json` prints, when validation stops a run
    before it starts (as `orchestra compile` would stop it)."""
    from orchestra_cli.errors import record_error
    from orchestra_cli.output import diagnostic_json

    message = validation_error_message(path, errors)
    typer.echo(f"orchestra: error: {message}", err=True)
    record_error(
        message,
        file=str(path),
        diagnostics=[diagnostic_json(error) for error in errors],
    )


def validation_error_message(path: Path, errors: Sequence[Diagnostic]) -> str:
    """Why a run with validation errors does not start (as `orchestra compile` would stop it)."""
    from orchestra_cli.output import count_noun

    return f"{path}: {count_noun(len(errors), 'validation error')}; nothing was run (see `orchestra compile`)"


def already_succeeded(begun: SessionStart, container: Container) -> bool:
    """Whether a resume found its session already succeeded (reported, not run again). A failed one runs on (its
    failed node again); so does a run killed after its last checkpoint but before it recorded its end (the engine
    finds nothing left to do and records the end)."""
    from orchestra_core.model.checkpoint import RunStatus
    from orchestra_core.ports.session_store import SessionStatus
    from orchestra_core.runs.start import RESUME

    checkpoint = begun.checkpoint
    if begun.kind != RESUME or checkpoint is None or checkpoint.status != RunStatus.SUCCESS:
        return False
    return container.session_store().get_session(begun.session_id).status is SessionStatus.SUCCESS


def nothing_to_resume(begun: SessionStart) -> str:
    """What `orchestra resume` says of a session that already succeeded."""
    status = begun.checkpoint.status.value if begun.checkpoint is not None else "success"
    return f"session {begun.session_id} already ended ({status}); nothing to resume"


def choose_backend(container: Container, options: RunOptions, graph: Graph) -> str:
    """`--backend`, else orchestra.yaml's for this pipeline (then global), else `langgraph` when providers
    are configured, else `simulate`; the container builds that one."""
    container.config.backend.from_value(options.backend or container.settings().backend_for(graph.name))
    return str(container.backend_name())


def check_run_providers(container: Container, options: RunOptions, graph: Graph) -> None:
    """Fail before a session exists when the backend's providers cannot work; fix the container's backend.

    Only nodes that run an LLM backend (`langgraph`, `direct`: the run's, or their own `backend`) need a
    provider; CLI agents bring their own models, and simulated nodes need none.

    Raises:
        OrchestraError: Unknown backend, unresolvable model, missing API key or provider package.
    """
    name = choose_backend(container, options, graph)
    from orchestra_adapters.backends.lint import backends_in_use
    from orchestra_adapters.backends.registry import BACKEND_NAMES, UnknownBackendError

    if name not in BACKEND_NAMES:
        raise UnknownBackendError(f"unknown backend {name!r}; available: {', '.join(BACKEND_NAMES)}")
    used = backends_in_use(graph, name)
    llm_nodes = [graph.nodes[node_id] for backend in _LLM_BACKENDS for node_id in used.get(backend, ())]
    if not llm_nodes:
        return
    from orchestra_adapters.llm.providers import check_providers, providers_of

    resolver = container.agent_resolver()
    check_providers(container.settings(), providers_of(resolver.model_for(node, graph) for node in llm_nodes))


_LLM_BACKENDS = ("langgraph", "direct")


def _announce(run: PipelineRun, options: RunOptions) -> None:
    if options.json_output:
        return
    typer.echo(f"session {run.session_id}")
    if run.start.origin is not None:
        source, turn = run.start.origin
        typer.echo(f"replay  of session {source} from turn {turn}")
    if run.start.from_start:
        typer.echo("again   from the beginning: the session stopped before its first checkpoint")
    if not options.quiet:
        typer.echo(f"logs    {run.logs_root}")


def _interviewer(options: RunOptions) -> tuple[Any, Any]:
    """The run's interviewer, and its console (None with --auto-approve)."""
    from orchestra_adapters.console.interviewer import ConsoleInterviewer
    from orchestra_core.interview import AutoApproveInterviewer, StageAnswersInterviewer

    console = None if options.auto_approve else ConsoleInterviewer()
    fallback: Any = console or AutoApproveInterviewer()
    if options.answers is None:
        return fallback, console
    from orchestra_adapters.console.answers_file import load_answers_file

    answers = load_answers_file(options.answers)
    return StageAnswersInterviewer(answers, source=str(options.answers), fallback=fallback), console


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


def exit_code(result: RunResult) -> int:
    """0 for a run that succeeded, 3 for one a budget stopped (resumable), 1 for one that failed."""
    from orchestra_cli.errors import EXIT_BUDGET_EXCEEDED, EXIT_FAILED
    from orchestra_core.model.checkpoint import RunStatus

    if result.succeeded:
        return 0
    return EXIT_BUDGET_EXCEEDED if result.status is RunStatus.BUDGET_EXCEEDED else EXIT_FAILED


def _report_failure_on_stderr(result: RunResult) -> None:
    """A failed (or stopped) run's reason as the last line on stderr, whatever stdout shows (scripts read it
    there); a budget's says how to continue."""
    from orchestra_cli.errors import one_line
    from orchestra_core.model.checkpoint import RunStatus

    reason = one_line(failure_reason(result))
    if result.status is RunStatus.BUDGET_EXCEEDED:
        typer.echo(f"orchestra: session {result.session_id} stopped: {reason}", err=True)
    else:
        typer.echo(f"orchestra: error: session {result.session_id} failed: {reason}", err=True)


def _report(options: RunOptions, result: RunResult, run: PipelineRun) -> None:
    if not result.succeeded:
        _report_failure_on_stderr(result)
    repos = repos_json(run)
    if options.json_output:
        from orchestra_cli.output import print_json

        print_json(run_json(result, repos))
        return
    stopped = result.status.value == "budget_exceeded"
    if options.quiet:
        typer.echo(result.status.value if result.succeeded else f"{result.status.value if stopped else 'fail'}: {failure_reason(result)}")
        return
    for name, repo in repos.items():
        typer.echo(f"repo    {name}: branch {repo['branch']} at {repo['head_sha'][:12]}")
    cost = run.session_cost()
    if cost.known or cost.unknown:
        typer.echo(f"cost    {cost.text()}")
    if not result.succeeded:  # the last line says why, as `failure_reason` of --json does
        typer.echo(f"{'stopped' if stopped else 'failure'} {failure_reason(result)}")


def repos_json(run: PipelineRun) -> dict[str, dict[str, str]]:
    """`repos` of the run JSON: each repo's session branch, base and head."""
    return {
        name: {"branch": head.branch, "base_sha": head.base_sha, "head_sha": head.sha}
        for name, head in run.repo_heads().items()
    }


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
        "failure_reason": None if result.succeeded else failure_reason(result),
    }


def failure_reason(result: RunResult) -> str:
    """Why a run failed, on one line: the failing node and its outcome's reason (a tool's exit status and
    stderr tail), the goal gate that held the run back, or why it stopped."""
    from orchestra_cli.errors import one_line

    return one_line(result.failure_reason or result.status.value)
