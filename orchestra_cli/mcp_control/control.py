"""What the control server does, without MCP: list, compile, start, read, answer, cancel and resume runs of one
project. Runs go on in this process's threads (`orchestra serve`'s PipelineService); every check is the CLI's
own, so a request is refused with the message the command would print."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orchestra_cli.errors import Refusal, refusals

if TYPE_CHECKING:
    from orchestra_adapters.server.runs import ServerRun
    from orchestra_adapters.server.service import PipelineService
    from orchestra_cli.runtime.options import RunOptions

DEFAULT_SESSIONS_LISTED = 20
DEFAULT_PAGE_TURNS = 50


class RunControl:
    """Drives the runs of the project found from `project` (its orchestra.yaml, store and workspace).

    Args:
        project: The project directory (or one inside it); the control server acts only inside its root.
        config: An orchestra.yaml to use instead of discovery.

    Raises:
        OrchestraError: The configuration is bad.
    """

    def __init__(self, project: Path, config: Path | None = None) -> None:
        from orchestra_adapters.server.service import PipelineService

        self._config = config
        self.service: PipelineService = PipelineService(config=config, cwd=project)
        self.root = self.service.project_root

    def close(self) -> None:
        """Cancel the runs still going (they stay resumable), wait for them, close the store."""
        self.service.close()

    # Pipelines -------------------------------------------------------------------------------------
    def list_pipelines(self) -> dict[str, Any]:
        """Every `.dot` file of the project with its goal and whether it compiles."""
        from orchestra_cli.mcp_control.pipelines import find_pipelines, pipeline_entry

        paths, more = find_pipelines(self.root)
        return {
            "project": str(self.root),
            "pipelines": [pipeline_entry(self.root, path, self._config) for path in paths],
            "truncated": more,
        }

    def compile(self, pipeline: str) -> dict[str, Any]:
        """`orchestra compile PIPELINE --json`'s document.

        Raises:
            Refusal: The path leaves the project, or the file cannot be read or parsed (the CLI's message).
        """
        from orchestra_cli.mcp_control.pipelines import compile_at
        from orchestra_cli.output import compile_json

        path = self._pipeline(pipeline)
        with refusals():
            prepared = compile_at(self.root, path, self._config)
        return {"path": str(path.relative_to(self.root)), **compile_json(prepared)}

    # Starting runs ---------------------------------------------------------------------------------
    def start(self, pipeline: str, options: RunOptions) -> dict[str, Any]:
        """Validate as `orchestra run` does, begin the session and run it in the background.

        Raises:
            Refusal: What `orchestra run` would refuse, with its message (nothing is recorded).
        """
        from orchestra_core.graph.dot_loader import read_pipeline_text

        path = self._pipeline(pipeline)
        options = options._replace(pipeline=path, config=self._config)
        with refusals():
            from orchestra_cli.runtime.options import check_run_options

            check_run_options(options)
            text = read_pipeline_text(path)
            container = self._container(options, path)
            graph = self._checked_graph(container, options, text, path)
            return self._launch(container, options, graph, text, path, None)

    def resume(self, session_id: str, options: RunOptions) -> dict[str, Any]:
        """Continue a session from its latest checkpoint, as `orchestra resume SESSION` does, in the background.

        Raises:
            Refusal: What `orchestra resume` would refuse, with its message (a session that already succeeded is
                reported as `orchestra resume` reports it, not run).
        """
        from orchestra_cli.runtime.execute import already_succeeded, existing_store, nothing_to_resume
        from orchestra_core.runs.start import start_resume

        options = options._replace(config=self._config)
        with refusals():
            from orchestra_cli.runtime.options import check_run_options

            check_run_options(options)
            self._refuse_running_here(session_id)
            container = self._container(options, None)
            try:
                begun = start_resume(existing_store(container, session_id), session_id, None)
                succeeded = already_succeeded(begun, container)
            except BaseException:
                self._close(container)
                raise
            if succeeded:
                self._close(container)
                return {"session_id": begun.session_id, "status": "success", "message": nothing_to_resume(begun)}
            path = Path(begun.source.path) if begun.source.path else Path("pipeline.dot")
            graph = self._checked_graph(container, options, begun.pipeline_text, path)
            return self._launch(container, options, graph, begun.pipeline_text, path, begun)

    def _checked_graph(self, container: Any, options: RunOptions, text: str, path: Path) -> Any:
        """The run's graph, validated with the run's rules and its providers checked, as `orchestra run` does."""
        from orchestra_cli.output import diagnostic_json
        from orchestra_cli.runtime.execute import check_run_providers, validation_error_message
        from orchestra_core.graph.dot_loader import parse_dot
        from orchestra_core.pipeline import prepare_pipeline

        try:
            prepared = prepare_pipeline(parse_dot(text, path=str(path)), extra_rules=container.run_rules())
            if prepared.errors:
                raise ValidationRefusal(
                    validation_error_message(path, prepared.errors), [diagnostic_json(d) for d in prepared.errors]
                )
            check_run_providers(container, options, prepared.graph)
        except BaseException:
            self._close(container)
            raise
        return prepared.graph

    def _launch(
        self, container: Any, options: RunOptions, graph: Any, text: str, path: Path, begun: Any
    ) -> dict[str, Any]:
        from orchestra_cli.runtime.options import parse_set_values, run_budget

        run = self.service.launch(
            container,
            graph,
            text,
            path,
            start=begun,
            initial=dict(parse_set_values(options.set_values)),
            auto_approve=options.auto_approve,
            budget=run_budget(options),
        )
        return {
            "session_id": run.session_id,
            "status": run.status,
            "pipeline": str(path.relative_to(self.root)) if path.is_relative_to(self.root) else str(path),
            "next": "session_status / session_turns follow it; answer_question answers its human gates",
        }

    def _container(self, options: RunOptions, path: Path | None) -> Any:
        from orchestra_adapters.container import build_container
        from orchestra_cli.options import require_config_file

        require_config_file(options.config)
        return build_container(config_path=options.config, pipeline_path=path, cwd=self.root, backend=options.backend)

    @staticmethod
    def _close(container: Any) -> None:
        from orchestra_adapters.container import close_container

        close_container(container)

    # Reading ---------------------------------------------------------------------------------------
    def sessions(self, limit: int | None, all_sessions: bool) -> dict[str, Any]:
        """`orchestra status --json`'s list, with `live` (status, waiting questions) for this server's runs.

        Raises:
            Refusal: A bad limit (the CLI's message).
        """
        from orchestra_cli.session_commands import check_status_options
        from orchestra_core.session.listing import list_session_rows

        with refusals():
            check_status_options(None, limit, None, all_sessions=all_sessions)
            store = self.service.store
            rows = [] if store is None else list_session_rows(
                store, limit=limit or DEFAULT_SESSIONS_LISTED, include_branches=all_sessions, locks=self.service.locks
            )
        listed = []
        for row in rows:
            entry = row.to_json()
            run = self.service.run_of(entry["session_id"])
            listed.append({**entry, **({"live": self._live(run)} if run is not None else {})})
        return {"sessions": listed}

    def status(self, session_id: str) -> dict[str, Any]:
        """`orchestra status SESSION --json` without its turns (`turns` pages them), with `live` for a run of this
        server: its status, current node and the questions it waits for.

        Raises:
            Refusal: An unknown session (the CLI's message).
        """
        from orchestra_core.session.summary import session_summary

        with refusals():
            store = self._store(session_id)
            document = session_summary(store, session_id, self.service.locks).to_json()
        document["turns_recorded"] = len(document.pop("turns", []))
        run = self.service.run_of(document["session_id"])
        if run is not None:
            document["live"] = self._live(run)
        return document

    def turns(self, session_id: str, limit: int | None, after: str | None) -> dict[str, Any]:
        """`orchestra status SESSION --json --limit N --after TURN`'s page of turns.

        Raises:
            Refusal: An unknown session or turn, a bad limit (the CLI's messages).
        """
        from orchestra_cli.session_commands import check_status_options
        from orchestra_core.session.pages import session_page

        with refusals():
            check_status_options(session_id, limit, after, all_sessions=False)
            store = self._store(session_id)
            page = session_page(store, session_id, self.service.locks, limit=limit or DEFAULT_PAGE_TURNS, after=after)
        return page.to_json()

    def events(self, session_id: str) -> list[dict[str, Any]]:
        """The session's turns as `orchestra attach --json` prints them, one object each, oldest first.

        Raises:
            Refusal: An unknown session (the CLI's message).
        """
        from orchestra_core.session.trace import SessionTrace

        with refusals():
            trace = SessionTrace(self._store(session_id), session_id)
            return [view.to_json() for view in trace.read()]

    def _store(self, session_id: str) -> Any:
        from orchestra_cli.runtime.execute import existing_store

        return existing_store(self.service.container, session_id)

    @staticmethod
    def _live(run: ServerRun) -> dict[str, Any]:
        questions = run.interviewer.pending() if run.interviewer is not None else []
        live = {**run.to_json(), "questions": [question.to_json() for question in questions]}
        chat = getattr(run.interviewer, "chat", None)
        if chat is not None and chat.node_id is not None:
            live["chat"] = chat.to_json()  # an interactive node's conversation; `waiting` for the human's message
        return live

    # Acting on runs --------------------------------------------------------------------------------
    def answer(self, session_id: str, answer: str, question_id: str | None) -> dict[str, Any]:
        """Answer a question a run of this server waits for (the only one, or `question_id`'s); with none waiting
        and an interactive node waiting for the human, `answer` is the human's message to it (`/done` ends it).

        Raises:
            Refusal: The session is not running here, waits for no such question, or the answer matches none of
                its options.
        """
        from orchestra_adapters.server.questions import UnknownAnswerError

        run = self._running(session_id)
        pending = run.interviewer.pending() if run.interviewer is not None else []
        chat = getattr(run.interviewer, "chat", None)
        if question_id is None and not pending and chat is not None and chat.post(answer):
            return {"session_id": session_id, "chat": chat.node_id, "sent": answer}
        if question_id is None:
            if len(pending) != 1:
                ids = ", ".join(question.id for question in pending)
                raise Refusal(
                    f"session {session_id} waits for {len(pending)} questions"
                    + (f" ({ids}): give question_id" if pending else " (the run auto-approves, or is between gates)")
                )
            question_id = pending[0].id
        if run.interviewer is None:
            raise Refusal(f"no pending question {question_id!r} (the run auto-approves)")
        try:
            chosen = run.interviewer.answer(question_id, answer)
        except KeyError:
            raise Refusal(f"no pending question {question_id!r} in session {session_id}") from None
        except UnknownAnswerError as error:
            raise Refusal(str(error)) from None
        return {"session_id": session_id, "question_id": question_id, "answer": chosen.value, "text": chosen.text}

    def cancel(self, session_id: str) -> dict[str, Any]:
        """Stop a run of this server (its command is killed, its question released) or of another process of the
        project (`orchestra run`: asked through its attach channel, it stops within a second); it stays resumable.

        Raises:
            Refusal: The session is unknown or not running.
        """
        run = self.service.run_of(session_id)
        if run is None:  # a run another process runs (`orchestra run`): asked through its attach channel
            self._cancel_elsewhere(session_id)
        elif not run.cancel():
            raise Refusal(f"session {session_id} is not running (it ended: {run.status})")
        return {"session_id": session_id, "status": "cancelling", "resume": "resume_run continues it"}

    def _cancel_elsewhere(self, session_id: str) -> None:
        from orchestra_adapters.console.cancel_watch import NotRunningError
        from orchestra_core.model.errors import OrchestraError

        try:
            self.service.cancel_elsewhere(session_id, "the control MCP server")
        except (NotRunningError, OrchestraError) as error:
            raise Refusal(str(error)) from None

    def _running(self, session_id: str) -> ServerRun:
        run = self.service.run_of(session_id)
        if run is None:
            raise Refusal(f"session {session_id} is not running in this server")
        return run

    def _refuse_running_here(self, session_id: str) -> None:
        run = self.service.run_of(session_id)
        if run is not None and run.running:
            raise Refusal(f"session {session_id} is running in this server; cancel it first or let it end")

    def _pipeline(self, pipeline: str) -> Path:
        from orchestra_cli.mcp_control.pipelines import OutsideProjectError, project_path

        try:
            return project_path(self.root, pipeline)
        except OutsideProjectError as error:
            raise Refusal(str(error)) from None


class ValidationRefusal(Refusal):
    """A pipeline with validation errors: `orchestra run`'s message, and the errors (`diagnostic_json` each)."""

    def __init__(self, message: str, diagnostics: Sequence[dict[str, Any]]) -> None:
        super().__init__(message, 1)
        self.diagnostics = list(diagnostics)
