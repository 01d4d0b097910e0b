"""The server's pipeline service: starts runs in threads through the core's public run API and reads the
session store for everything else (sessions started from the CLI included)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from orchestra_adapters.server.questions import HttpInterviewer
from orchestra_adapters.server.runs import (
    FAIL,
    RUNNING,
    CancellableRunner,
    ServerRun,
    cancellable_backend,
)

MAX_PIPELINE_BYTES = 1 << 20
# Finished runs whose live event logs (and `cancelled` status) the server keeps; older ones read from the store.
KEEP_FINISHED = 50


class RequestError(Exception):
    """Bad input for a request: its HTTP status, message and extra JSON fields."""

    def __init__(self, status: int, message: str, **details: Any) -> None:
        super().__init__(message)
        self.status = status
        self.details = details


class PipelineService:
    """Runs pipelines of one project, each in its own thread and session, and reads its session store.

    Args:
        config: orchestra.yaml to use (None: discovered from `cwd` as `orchestra run` does).
        cwd: The directory the server runs in (the project's, or inside it).
        server_url: The address browsers reach the server at (`--public-url`, else `http://HOST:PORT`): the
            `needs_input` notifications of its runs link their page there.
    """

    def __init__(self, config: Path | None = None, cwd: Path | None = None, server_url: str | None = None) -> None:
        from orchestra_adapters.container import build_container

        self.server_url = server_url
        self._config = config
        self._cwd = (cwd or Path.cwd()).resolve()
        self._reader = build_container(config_path=config, cwd=self._cwd)
        self.project_root: Path = Path(self._reader.project_root()).resolve()
        self._runs: dict[str, ServerRun] = {}
        self._lock = threading.Lock()
        self._store: Any = None

    # Starting runs ---------------------------------------------------------------------------------
    def pipeline_source(self, body: dict[str, Any]) -> tuple[str, Path]:
        """The DOT text of a submission and the path it is recorded under (`dot`, or `path` in the project).

        Raises:
            RequestError: Neither or both given, not text, or a path outside the project or unreadable.
        """
        dot, path = body.get("dot"), body.get("path")
        if (dot is None) == (path is None):
            raise RequestError(400, 'give the pipeline as "dot" (DOT source) or "path" (a file in the project)')
        if dot is not None:
            if not isinstance(dot, str) or not dot.strip():
                raise RequestError(400, '"dot" must be the DOT source as a non-empty string')
            return dot, self.project_root / "pipeline.dot"
        resolved = self.checked_path(self.project_root, path)
        try:
            if resolved.stat().st_size > MAX_PIPELINE_BYTES:
                raise RequestError(400, f"path {path!r} is larger than {MAX_PIPELINE_BYTES} bytes")
            return resolved.read_text(encoding="utf-8"), resolved
        except (OSError, UnicodeDecodeError) as error:
            raise RequestError(400, f"cannot read {path!r}: {getattr(error, 'strerror', None) or error}") from None

    @staticmethod
    def checked_path(root: Path, path: Any) -> Path:
        """`path` (relative to the project `root`) resolved, symlinks followed.

        Raises:
            RequestError: `path` is not a non-empty string, or it leads outside `root`.
        """
        if not isinstance(path, str) or not path:
            raise RequestError(400, '"path" must be a file path relative to the project')
        resolved = (root / path).resolve()
        if not resolved.is_relative_to(root):
            raise RequestError(400, f"path {path!r} is outside the project ({root})")
        return resolved

    def submit(self, body: dict[str, Any]) -> ServerRun:
        """Validate a submission, begin its session and start its run in a thread of its own.

        Raises:
            RequestError: Bad body, a pipeline with validation errors (`diagnostics`), bad settings.
        """
        from orchestra_adapters.container import build_container, close_container
        from orchestra_adapters.server.launch import budget_of
        from orchestra_core.model.errors import OrchestraError

        text, path = self.pipeline_source(body)
        auto_approve, initial, backend = _options(body)
        try:
            budget = budget_of(body.get("budget"))
        except ValueError as error:
            raise RequestError(400, str(error)) from None
        container = build_container(config_path=self._config, pipeline_path=path, cwd=self._cwd, backend=backend)
        try:
            graph = self._prepare(container, text, path)
            interviewer = None if auto_approve else _chat_interviewer()
            run = self._begin(container, graph, text, path, initial, interviewer, budget=budget)
        except OrchestraError as error:
            close_container(container)
            raise RequestError(400, str(error)) from None
        except BaseException:
            close_container(container)
            raise
        return run

    def launch(
        self,
        container: Any,
        graph: Any,
        text: str,
        path: Path,
        *,
        start: Any = None,
        initial: dict[str, Any] | None = None,
        auto_approve: bool = False,
        budget: Any = None,
    ) -> ServerRun:
        """Start a run its caller validated (`orchestra mcp serve --control`) in a thread of its own.

        Args:
            container: The run's composition root, its backend chosen (closed when the run ends, or here when
                it cannot start).
            graph: The pipeline, prepared and valid.
            text: Its DOT source; `path` the file it is recorded under.
            start: The run's SessionStart from the store (a resume's); None: a new session of `graph`.
            initial: Context values to start with (`--set`).
            auto_approve: Answer every human gate with its first choice (else questions wait for `answer`).
            budget: The session's Budget for this run (None: the graph's or orchestra.yaml's).

        Raises:
            OrchestraError: The session cannot begin (locked by another runner, a store error).
        """
        interviewer = None if auto_approve else _chat_interviewer()
        try:
            return self._begin(container, graph, text, path, initial or {}, interviewer, start=start, budget=budget)
        except BaseException:
            from orchestra_adapters.container import close_container

            close_container(container)
            raise

    def _prepare(self, container: Any, text: str, path: Path) -> Any:
        from orchestra_adapters.backends.registry import BACKEND_NAMES
        from orchestra_core.graph.dot_loader import parse_dot
        from orchestra_core.pipeline import prepare_pipeline

        prepared = prepare_pipeline(parse_dot(text, path=str(path)), extra_rules=container.run_rules())
        if prepared.errors:
            raise RequestError(
                400,
                f"the pipeline has {len(prepared.errors)} validation error(s); nothing was run",
                diagnostics=[_diagnostic_json(d) for d in prepared.diagnostics],
            )
        graph = prepared.graph
        container.config.backend.from_value(container.config.backend() or container.settings().backend_for(graph.name))
        name = str(container.backend_name())
        if name not in BACKEND_NAMES:
            raise RequestError(400, f"unknown backend {name!r}; available: {', '.join(BACKEND_NAMES)}")
        _check_providers(container, graph, name)
        return graph

    def _begin(
        self,
        container: Any,
        graph: Any,
        text: str,
        path: Path,
        initial: dict[str, Any],
        interviewer: Any,
        *,
        start: Any = None,
        budget: Any = None,
    ) -> ServerRun:
        from orchestra_adapters.container import run_arguments
        from orchestra_core.interview import AutoApproveInterviewer
        from orchestra_core.runs.pipeline_run import PipelineRun
        from orchestra_core.runs.ports import RunOptions, RunPorts
        from orchestra_core.runs.start import start_new

        arguments = run_arguments(container, interviewer=interviewer or AutoApproveInterviewer(), graph=graph)
        holder: list[ServerRun] = []
        options = RunOptions(
            settings=arguments.pop("settings"),
            project_root=arguments.pop("project_root"),
            initial_context=initial,
            on_event=lambda event: holder[0].on_event(event) if holder else None,
            answer_routes=self._answer_routes(arguments["notifier"], interviewer),
            budget=budget,
        )
        stop_runner = arguments.get("command_runner")
        pending = ServerRun("", text, interviewer)
        holder.append(pending)
        if stop_runner is not None:
            arguments["command_runner"] = CancellableRunner(stop_runner, pending.stop)
        arguments["backend"] = cancellable_backend(arguments.get("backend"), pending.stop)
        ports = RunPorts(**arguments)
        assert ports.store is not None
        begun = start_new(ports.store, graph, path, text) if start is None else start
        run = PipelineRun(graph, begun, ports, options)
        pending.session_id = run.session_id
        with self._lock:
            self._runs[run.session_id] = pending
            self._forget_old_runs()
        pending.start(lambda: _execute(run, pending, container))
        return pending

    def _answer_routes(self, notifier: Any, interviewer: Any) -> Any:
        """A run of the server is answered on its page (not with `orchestra attach`); None without notifications."""
        if notifier is None:
            return None
        from orchestra_core.model.notifications import AnswerRoutes

        return AnswerRoutes(server_url=self.server_url if interviewer is not None else None)

    def _forget_old_runs(self) -> None:
        """Keep the event logs of the KEEP_FINISHED newest finished runs; older ones are read from the store
        like any session started elsewhere (a long-lived server must not grow with every run)."""
        finished = [session for session, run in self._runs.items() if run.status != RUNNING]
        for session in finished[: max(len(finished) - KEEP_FINISHED, 0)]:
            del self._runs[session]

    # Reading ---------------------------------------------------------------------------------------
    def run_of(self, session_id: str) -> ServerRun | None:
        with self._lock:
            return self._runs.get(session_id)

    def runs(self) -> list[ServerRun]:
        with self._lock:
            return list(self._runs.values())

    @property
    def store(self) -> Any:
        """The session store, opened once it exists (None before any session was recorded)."""
        if self._store is None:
            from orchestra_adapters.storage.factory import store_location

            _, exists = store_location(self._reader.settings().storage, self.project_root)
            if exists:
                self._store = self._reader.session_store()
        return self._store

    @property
    def locks(self) -> Any:
        return self._reader.session_locks()

    @property
    def container(self) -> Any:
        """The composition root the server reads with (its settings, git, store)."""
        return self._reader

    def cancel_elsewhere(self, session_id: str, origin: str) -> None:
        """Ask the run of `session_id` that another process of the project runs (`orchestra run`) to stop.

        Raises:
            NotRunningError: The session is not running.
            OrchestraError: The session is unknown.
        """
        from orchestra_adapters.console.cancel_watch import NotRunningError, request_cancel
        from orchestra_core.model.layout import ProjectLayout

        if self.store is None:
            raise NotRunningError(f"session {session_id} is not running (no session was recorded)")
        state_dir = ProjectLayout(self.project_root).state_dir
        request_cancel(self.store, self.locks, state_dir, session_id, origin)

    def close(self) -> None:
        """Cancel the runs still going, wait for them, then close the store."""
        from orchestra_adapters.container import close_container

        for run in self.runs():
            run.cancel()
        for run in self.runs():
            if run.thread is not None:
                run.thread.join()
        close_container(self._reader)


def _execute(run: Any, server_run: ServerRun, container: Any) -> None:
    """The run's thread: open it with the server's stop, run it to its end, release it."""
    from orchestra_adapters.container import close_container
    from orchestra_core.model.errors import OrchestraError

    status, error = FAIL, None
    try:
        run.open()
        result = run.execute(stop=server_run.stop)
        status = result.status.value
        error = None if result.succeeded else (result.failure_reason or status)
    except OrchestraError as failure:
        error = str(failure)
    except Exception as failure:  # a bug: the run recorded it; the server goes on
        error = f"internal error: {type(failure).__name__}: {failure}"
    finally:
        try:
            run.close()
        finally:
            close_container(container)
            server_run.finish(status, error)


def _check_providers(container: Any, graph: Any, backend: str) -> None:
    """As `orchestra run`: the providers of the nodes that run an LLM backend work (keys set, packages
    installed), before a session exists.

    Raises:
        OrchestraError: A model does not resolve, a key or a package is missing.
    """
    from orchestra_adapters.backends.lint import backends_in_use

    used = backends_in_use(graph, backend)
    nodes = [graph.nodes[node_id] for name in ("langgraph", "direct") for node_id in used.get(name, ())]
    if not nodes:
        return
    from orchestra_adapters.llm.providers import check_providers, providers_of

    resolver = container.agent_resolver()
    check_providers(container.settings(), providers_of(resolver.model_for(node, graph) for node in nodes))


def _options(body: dict[str, Any]) -> tuple[bool, dict[str, Any], str | None]:
    auto_approve = body.get("auto_approve", False)
    if not isinstance(auto_approve, bool):
        raise RequestError(400, '"auto_approve" must be true or false')
    values = body.get("set", {})
    if not isinstance(values, dict) or not all(isinstance(key, str) for key in values):
        raise RequestError(400, '"set" must be an object of context keys to values')
    backend = body.get("backend")
    if backend is not None and (not isinstance(backend, str) or not backend):
        raise RequestError(400, '"backend" must be a backend name')
    known = {"dot", "path", "auto_approve", "set", "backend", "budget"}
    unknown = sorted(set(body) - known)
    if unknown:
        raise RequestError(400, f"unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    return auto_approve, dict(values), backend


def _diagnostic_json(diagnostic: Any) -> dict[str, Any]:
    edge = diagnostic.edge
    return {
        "rule": diagnostic.rule,
        "severity": diagnostic.severity.value,
        "message": diagnostic.message,
        "node_id": diagnostic.node_id,
        "edge": list(edge) if edge else None,
        "fix": diagnostic.fix,
    }


def _chat_interviewer() -> HttpInterviewer:
    """Human gates as questions, interactive nodes as a chat (server/chat_box.py)."""
    from orchestra_adapters.server.chat_box import HttpChatInterviewer

    return HttpChatInterviewer()
