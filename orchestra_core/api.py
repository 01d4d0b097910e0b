"""The functions another tool calls: load and validate pipelines, run, resume and replay them, follow events.

Every function takes the ports it works with as keyword arguments (`store=`, `backend=`, `interviewer=`,
`git=`, `run_directories=`, ... see `PortArguments`); what is not given has a default (no recording,
simulation, run files in memory). `orchestra_adapters.container.build_container` builds them all from
an orchestra.yaml file or a dict, for tools that want Orchestra's own adapters.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from attrs import evolve

from orchestra_core.engine.streams import AsyncEventStream, EventStream
from orchestra_core.graph.dot_loader import parse_dot, read_pipeline_text
from orchestra_core.graph.dot_writer import to_dot
from orchestra_core.model.budget import Budget
from orchestra_core.model.checkpoint import RunResult
from orchestra_core.model.graph import Graph
from orchestra_core.model.settings import OrchestraSettings
from orchestra_core.ports.clock import Clock
from orchestra_core.ports.codergen_backend import CodergenBackend
from orchestra_core.ports.command_runner import CommandRunner
from orchestra_core.ports.commit_messages import CommitMessageGenerator
from orchestra_core.ports.git import Git
from orchestra_core.ports.git_remotes import GitRemotes
from orchestra_core.ports.interviewer import Interviewer
from orchestra_core.ports.prompt_library import PromptLibrary
from orchestra_core.ports.run_directory import RunDirectoryFactory
from orchestra_core.ports.session_locks import SessionLocks
from orchestra_core.ports.session_store import SessionStore
from orchestra_core.ports.tracer import Tracer
from orchestra_core.runs.events import RunEvent
from orchestra_core.runs.extensions import Extensions
from orchestra_core.runs.pipeline_run import PipelineRun
from orchestra_core.runs.ports import BackendFactory, FleetPorts, RunOptions, RunPorts
from orchestra_core.runs.start import NEW, SessionStart, start_new, start_replay, start_resume
from orchestra_core.session.api import history
from orchestra_core.session.checkpoints import PipelineSource
from orchestra_core.session.codec import decode_record
from orchestra_core.session.turn_view import TurnView
from orchestra_core.transforms import apply_transforms
from orchestra_core.validation import Diagnostic, LintRule, ValidationError
from orchestra_core.validation import validate as validate_graph

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from orchestra_core.ports.notifier import Notifier

EventCallback = Callable[[RunEvent], None]


class AdapterArguments(TypedDict, total=False):
    """The ports `resume_session` and `replay_session` accept as keyword arguments besides `store`."""

    backend: CodergenBackend | BackendFactory | None
    interviewer: Interviewer | None
    command_runner: CommandRunner | None
    git: Git | None
    git_remotes: GitRemotes | None
    commit_messages: CommitMessageGenerator | None
    prompt_library: PromptLibrary | None
    session_locks: SessionLocks | None
    run_directories: RunDirectoryFactory
    clock: Clock
    fleet: FleetPorts | None
    notifier: Notifier | None
    tracer: Tracer | None


class PortArguments(AdapterArguments, total=False):
    """The ports `run_pipeline` accepts as keyword arguments (each optional; see `RunPorts`)."""

    store: SessionStore | None


# Pipelines ---------------------------------------------------------------------------------------------
def load_pipeline(path: str | os.PathLike[str], *, extensions: Extensions | None = None) -> Graph:
    """Read a DOT pipeline file and apply the transforms (`$goal`, the model stylesheet, custom ones).

    The graph is not validated: call `validate` (a run validates before it starts).

    Raises:
        PipelineLoadError: The file cannot be read or is not valid DOT of the supported subset (the
            message names the file and line).
        TransformError: A custom transform returned something other than a Graph.
    """
    return parse_pipeline(read_pipeline_text(path), path=str(path), extensions=extensions)


def parse_pipeline(text: str, *, path: str | None = None, extensions: Extensions | None = None) -> Graph:
    """`load_pipeline` for DOT text in hand; `path` names it in messages."""
    transforms = extensions.transforms if extensions is not None else ()
    return apply_transforms(parse_dot(text, path=path), transforms)


def validate(
    graph: Graph, *, extensions: Extensions | None = None, extra_rules: Sequence[LintRule] = ()
) -> list[Diagnostic]:
    """Every diagnostic of the built-in lint rules, the extensions' rules and `extra_rules`, errors first
    in rule order. A graph with an error-severity diagnostic must not run."""
    extensions = extensions or Extensions()
    rules = [*extensions.lint_rules, *extra_rules]
    return validate_graph(graph, rules, extensions.handler_types)


def validate_or_raise(
    graph: Graph, *, extensions: Extensions | None = None, extra_rules: Sequence[LintRule] = ()
) -> list[Diagnostic]:
    """`validate`, raising ValidationError when there is an error; returns the warnings otherwise."""
    diagnostics = validate(graph, extensions=extensions, extra_rules=extra_rules)
    if any(d.severity.value == "error" for d in diagnostics):
        raise ValidationError(diagnostics)
    return diagnostics


# Running -----------------------------------------------------------------------------------------------
def run_pipeline(
    graph: Graph,
    *,
    on_event: EventCallback | None = None,
    settings: OrchestraSettings | None = None,
    project_root: str | os.PathLike[str] | None = None,
    logs_root: str | None = None,
    initial_context: Mapping[str, Any] | None = None,
    max_node_visits: int | None = None,
    extensions: Extensions | None = None,
    rollback_on_failure: bool | None = None,
    budget: Budget | None = None,
    **ports: Unpack[PortArguments],
) -> RunResult:
    """Run a pipeline to its end as a new session; pipeline failures are results, not exceptions.

    Args:
        graph: The pipeline (from `load_pipeline`); it is validated first.
        on_event: Called with every engine event, workspace event and agent turn as it happens.
        settings: orchestra.yaml's settings (agents, workspace repos, project tools); default: none.
        project_root: Where `.orchestra/` is (worktrees, default run directories); default: the current
            directory.
        logs_root: The run directory; default `.orchestra/runs/<session-id>`.
        initial_context: Values the run starts with.
        max_node_visits: Node executions after which the run stops as looping.
        extensions: Custom handlers, tools, lint rules and transforms.
        rollback_on_failure: After a failed run, put every workspace repo back as it was before it (the
            commits kept under `refs/orchestra/abandoned/`); None: `settings.workspace.rollback` decides.
        budget: This run's limits (`Budget(max_cost=Money.usd(5))`), over the graph's budget attributes and
            `settings.budget`, key by key. A run a budget stops ends with status `budget_exceeded` (resumable).
        **ports: The adapters (`store=`, `backend=`, `interviewer=`, ...; see `PortArguments`).

    Raises:
        ValidationError: The graph has error diagnostics (nothing was recorded).
        OrchestraError: The run could not start (a busy session, an unusable repo, ...).
    """
    run_ports = RunPorts(**ports)
    validate_or_raise(graph, extensions=extensions)
    options = _options(on_event, settings, project_root, logs_root, initial_context, max_node_visits)
    options = evolve(options, rollback_on_failure=rollback_on_failure, budget=budget)
    start = _new_start(run_ports.store, graph)
    return _execute(graph, start, run_ports, options, extensions)


def resume_session(
    session_id: str,
    *,
    store: SessionStore,
    graph: Graph | None = None,
    on_event: EventCallback | None = None,
    settings: OrchestraSettings | None = None,
    project_root: str | os.PathLike[str] | None = None,
    logs_root: str | None = None,
    initial_context: Mapping[str, Any] | None = None,
    max_node_visits: int | None = None,
    extensions: Extensions | None = None,
    rollback_on_failure: bool | None = None,
    budget: Budget | None = None,
    **ports: Unpack[AdapterArguments],
) -> RunResult:
    """Continue a recorded session from its latest checkpoint, with the pipeline it recorded (or `graph`).

    Finished nodes are not run again; workspace repos go back to the checkpoint's commits first. A session
    stopped before its first checkpoint runs again from the start node, in the same session, on the session
    branches it recorded. `initial_context` values override the restored ones; `rollback_on_failure` and `budget`
    are `run_pipeline`'s (a session a budget stopped goes on with a higher one; what it spent before counts).

    Raises:
        SessionNotFoundError: No such session.
        NothingToResumeError: The session is a parallel branch of another, or it has no checkpoint and recorded
            no pipeline.
        ValidationError: The pipeline has error diagnostics.
    """
    options = _options(on_event, settings, project_root, logs_root, initial_context, max_node_visits)
    options = evolve(options, rollback_on_failure=rollback_on_failure, budget=budget)
    return _continue(start_resume(store, session_id, None), graph, RunPorts(store=store, **ports), options, extensions)


def replay_session(
    session_id: str,
    turn_id: str,
    *,
    store: SessionStore,
    graph: Graph | None = None,
    on_event: EventCallback | None = None,
    settings: OrchestraSettings | None = None,
    project_root: str | os.PathLike[str] | None = None,
    logs_root: str | None = None,
    initial_context: Mapping[str, Any] | None = None,
    max_node_visits: int | None = None,
    extensions: Extensions | None = None,
    budget: Budget | None = None,
    **ports: Unpack[AdapterArguments],
) -> RunResult:
    """Fork a session at one of its turns (the checkpoint at or before it) and run the fork on.

    The original session is left as it was; the result's `session_id` is the new session. `budget` is
    `run_pipeline`'s; the fork starts from what the session had spent up to the turn.

    Raises:
        SessionNotFoundError / TurnNotFoundError: No such session or turn.
        NothingToResumeError: No checkpoint at or before the turn.
        ValidationError: The pipeline has error diagnostics (no fork is made).
    """
    options = evolve(
        _options(on_event, settings, project_root, logs_root, initial_context, max_node_visits), budget=budget
    )
    return _continue(start_replay(store, session_id, turn_id, None), graph, RunPorts(store=store, **ports), options, extensions)


# Following a run ---------------------------------------------------------------------------------------
def stream_pipeline(graph: Graph, **arguments: Any) -> EventStream:
    """Run a pipeline in a background thread and iterate over its events as they happen.

    Takes `run_pipeline`'s arguments (but `on_event`). `stream.result` is the RunResult once the
    iteration ended; an error of the run is raised by the iteration.
    """
    return EventStream(lambda emit: run_pipeline(graph, on_event=emit, **arguments))


async def arun_pipeline(graph: Graph, **arguments: Any) -> RunResult:
    """`run_pipeline` for asyncio applications: the run goes on in a worker thread; `on_event` (when given)
    is called on the event loop's thread."""
    stream = astream_pipeline(graph, **{k: v for k, v in arguments.items() if k != "on_event"})
    callback = arguments.get("on_event")
    async for event in stream:
        if callback is not None:
            callback(event)
    result: RunResult = await stream.result()
    return result


def astream_pipeline(graph: Graph, **arguments: Any) -> AsyncEventStream:
    """Run a pipeline in a worker thread and `async for` over its events; `await stream.result()` at the end.

    Must be called from a running event loop. Takes `run_pipeline`'s arguments (but `on_event`).
    """
    return AsyncEventStream(lambda emit: run_pipeline(graph, on_event=emit, **arguments))


# Reading sessions --------------------------------------------------------------------------------------
def read_session(store: SessionStore, session_id: str) -> list[TurnView]:
    """Every turn of a session's history, oldest first, decoded: `view.record` is the AgentTurn,
    CheckpointRecord, NodeExecution, workspace event, ... (None for turn types Orchestra does not define).

    Raises:
        SessionNotFoundError: No such session.
    """
    info = store.get_session(session_id)
    turns = list(history(store, info.session_id))
    turns.reverse()
    return [
        TurnView(turn.turn_id, turn.type_id, info.session_id, None, turn.created_at, decode_record(turn))
        for turn in turns
    ]


# Helpers -----------------------------------------------------------------------------------------------
def _options(
    on_event: EventCallback | None,
    settings: OrchestraSettings | None,
    project_root: str | os.PathLike[str] | None,
    logs_root: str | None,
    initial_context: Mapping[str, Any] | None,
    max_node_visits: int | None,
) -> RunOptions:
    return RunOptions(
        settings=settings or OrchestraSettings(),
        project_root=Path(project_root) if project_root is not None else Path.cwd(),
        logs_root=logs_root,
        initial_context=dict(initial_context or {}),
        max_node_visits=max_node_visits,
        on_event=on_event,
    )


def _new_start(store: SessionStore | None, graph: Graph) -> SessionStart:
    """A new session; the pipeline's DOT text is recorded so that a resume or replay runs the same graph."""
    path = Path(graph.source_path) if graph.source_path else Path(f"{graph.name or 'pipeline'}.dot")
    if store is None:
        return SessionStart(NEW, "", "", PipelineSource(str(path)))
    text = read_pipeline_text(path) if graph.source_path and path.is_file() else to_dot(graph)
    return start_new(store, graph, path, text)


def _continue(
    start: SessionStart, graph: Graph | None, ports: RunPorts, options: RunOptions, extensions: Extensions | None
) -> RunResult:
    """Resume or replay: with `graph`, else the pipeline the session recorded; validated before any fork."""
    if graph is None:
        graph = parse_pipeline(start.pipeline_text, path=start.source.path, extensions=extensions)
    validate_or_raise(graph, extensions=extensions)
    return _execute(graph, start, ports, options, extensions)


def _execute(
    graph: Graph, start: SessionStart, ports: RunPorts, options: RunOptions, extensions: Extensions | None
) -> RunResult:
    with PipelineRun(graph, start, ports, options, extensions) as run:
        return run.open().execute()


__all__ = [
    "AdapterArguments",
    "PortArguments",
    "arun_pipeline",
    "astream_pipeline",
    "load_pipeline",
    "parse_pipeline",
    "read_session",
    "replay_session",
    "resume_session",
    "run_pipeline",
    "stream_pipeline",
    "validate",
    "validate_or_raise",
]
