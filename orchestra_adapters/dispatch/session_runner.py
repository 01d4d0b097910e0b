"""What a fleet worker does with a session task: decide by the session lock whether there is work left, then run
the session (new) or resume it from its latest checkpoint, recording a pickup after a lost worker."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from contextlib import suppress
from typing import Any

from orchestra_core.model.cancellation import Cancellation
from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.records import LifecycleEvent, PipelineLifecycle
from orchestra_core.ports.dispatcher import Task
from orchestra_core.ports.fleet import FleetEntry, FleetLedger
from orchestra_core.ports.session_locks import SessionBusyError
from orchestra_core.ports.session_store import SessionStatus, SessionStore
from orchestra_core.runs.ports import FleetPorts
from orchestra_core.session.api import append_record

# Sessions a worker never takes up again: ended, cancelled, or stopped by a budget (a person resumes those, with a
# higher budget: `orchestra resume ID --max-cost N`).
FINAL = (SessionStatus.SUCCESS, SessionStatus.FAIL, SessionStatus.CANCELLED, SessionStatus.BUDGET_EXCEEDED)
CANCEL_POLL_S = 0.5
CANCEL_REASON = "cancelled with orchestra cancel"


class SessionTaskRunner:
    """Runs the session tasks of one worker process (any number at once, one per Celery slot).

    A task does nothing when the session already ended or a live runner holds its lock (redelivered and
    duplicate tasks are harmless); otherwise it takes the lock (a race lost there is the same "busy"), records a
    pickup when the session's previous runner died, and runs the session to its end. A run keeps polling the ledger
    for `orchestra cancel`, and stops when its lock's connection breaks (another worker may have the session then).
    """

    def __init__(
        self,
        make_container: Callable[[], Any],
        ledger: FleetLedger,
        worker: str,
        fleet_ports: Callable[[], FleetPorts | None] = lambda: None,
    ) -> None:
        """`fleet_ports`: what the sessions' runs send their parallel branches to the fleet with (None: they run
        them in this worker's threads)."""
        self._make_container = make_container
        self._ledger = ledger
        self.worker = worker
        self.fleet_ports = fleet_ports
        self._running: dict[str, str] = {}
        self._lock = threading.Lock()

    def running(self) -> dict[str, str]:
        """Session id -> pipeline name of the sessions this worker runs now."""
        with self._lock:
            return dict(self._running)

    def __call__(self, task: Task) -> Mapping[str, Any]:
        from orchestra_adapters.container import close_container

        container = self._make_container()
        try:
            return self._run(container, task.session_id)
        finally:
            close_container(container)

    def _run(self, container: Any, session_id: str) -> dict[str, Any]:
        store: SessionStore = container.session_store()
        locks = container.session_locks()
        entry = self._ledger.get(session_id)
        if entry is None:
            return _outcome(session_id, "unknown", "the fleet never had this session")
        info = store.get_session(session_id)
        if info.status in FINAL:
            self._ledger.finish(session_id, "")
            return _outcome(session_id, "ended", info.status.value)
        holder = locks.holder(session_id)
        if holder is not None:
            return _outcome(session_id, "busy", holder)
        self._ledger.take(session_id, self.worker)  # from here on, this worker's death is the pick-up's to notice
        return _SessionRun(self, container, store, entry, info.status).run()

    def _track(self, session_id: str, pipeline: str | None) -> None:
        with self._lock:
            if pipeline is None:
                self._running.pop(session_id, None)
            else:
                self._running[session_id] = pipeline


class _SessionRun:
    """One session taken by this worker."""

    def __init__(self, runner: SessionTaskRunner, container: Any, store: SessionStore, entry: FleetEntry, status: SessionStatus) -> None:
        self.runner = runner
        self.container = container
        self.store = store
        self.entry = entry
        self.status = status
        self.session_id = entry.session_id
        self.stop = Cancellation(CANCEL_REASON)
        self.cancelled = threading.Event()

    def run(self) -> dict[str, Any]:
        from orchestra_core.runs.pipeline_run import PipelineRun

        try:
            graph, start = self._plan()
            ports, options = self._ports(graph)
            run = PipelineRun(graph, start, ports, options)  # takes the session's lock
        except SessionBusyError as busy:
            return _outcome(self.session_id, "busy", str(busy))
        except OrchestraError as error:  # bad input on this worker (its repos, its providers): the session fails
            return self._refuse(str(error))
        self.runner._track(self.session_id, graph.name)
        try:
            self.runner._ledger.start(self.session_id, self.runner.worker)
            if self.status in (SessionStatus.RUNNING, SessionStatus.INTERRUPTED):
                self._record_pickup()
            watchers = self._watch(run)
            try:
                result = run.open().execute(stop=self.stop)
            finally:
                watchers.set()
            if self.cancelled.is_set():
                append_record(self.store, self.session_id, PipelineLifecycle(
                    LifecycleEvent.CANCELLED, graph.name, error=CANCEL_REASON,
                ))  # fmt: skip
            elif self.stop.is_set():  # the lock was lost: another worker has (or will have) the session
                return _outcome(self.session_id, "lost", self.stop.reason or "the session lock was lost")
            self.runner._ledger.finish(self.session_id, self.runner.worker)
            status = "cancelled" if self.cancelled.is_set() else result.status.value
            return _outcome(self.session_id, "ran", status)
        except OrchestraError as error:  # recorded as failed by the run
            self.runner._ledger.finish(self.session_id, self.runner.worker)
            return _outcome(self.session_id, "ran", "fail", str(error))
        finally:
            run.close()
            self.runner._track(self.session_id, None)

    def _plan(self) -> tuple[Any, Any]:
        """The pipeline and where the run starts: a resume from the latest checkpoint, else the submitted run."""
        from orchestra_core.graph.dot_loader import parse_dot
        from orchestra_core.pipeline import prepare_pipeline
        from orchestra_core.runs.start import NEW, SessionStart, start_resume
        from orchestra_core.session.api import latest_checkpoint
        from orchestra_core.session.checkpoints import PipelineSource
        from orchestra_core.session.restart import recorded_start
        from orchestra_core.validation import ValidationError

        submission = self.entry.submission
        self._check_repos(submission)
        begun = latest_checkpoint(self.store, self.session_id) is not None
        if begun or recorded_start(self.store, self.session_id) is not None:  # from the start again, when no checkpoint
            start = start_resume(self.store, self.session_id, None)
        else:
            blob = str(submission.get("pipeline_blob") or "")
            text = self.store.get_blob(blob).decode("utf-8")
            source = PipelineSource(str(submission.get("pipeline_path") or ""), blob)
            start = SessionStart(NEW, self.session_id, text, source)
        path = start.source.path or "pipeline.dot"
        prepared = prepare_pipeline(parse_dot(start.pipeline_text, path=path), extra_rules=self.container.run_rules())
        if prepared.errors:
            raise OrchestraError(f"{path}: {ValidationError(list(prepared.diagnostics))}")
        return prepared.graph, start

    def _check_repos(self, submission: Mapping[str, Any]) -> None:
        """The submitter's workspace repos must be this worker's too (same names and remotes).

        Raises:
            OrchestraError: One is missing or points elsewhere (the message names the key).
        """
        mine = self.container.settings().workspace.repos
        for name, remote in dict(submission.get("repos") or {}).items():
            repo = mine.get(name)
            if repo is None:
                raise OrchestraError(
                    f"worker {self.runner.worker} has no workspace repo {name!r} (workspace.repos.{name} in its "
                    f"orchestra.yaml, with remote {remote}); the pipeline's repos: {', '.join(sorted(submission['repos']))}"
                )
            if remote and repo.remote != remote:
                raise OrchestraError(
                    f"worker {self.runner.worker}: workspace.repos.{name}.remote is {repo.remote!r}, not the "
                    f"submitter's {remote!r}"
                )

    def _ports(self, graph: Any) -> tuple[Any, Any]:
        from orchestra_adapters.container import run_arguments
        from orchestra_core.interview import AutoApproveInterviewer
        from orchestra_core.runs.ports import RunOptions, RunPorts

        submission = self.entry.submission
        interviewer = AutoApproveInterviewer() if submission.get("auto_approve") else None
        arguments = run_arguments(self.container, interviewer=interviewer, graph=graph)
        options = RunOptions(
            settings=arguments.pop("settings"),
            project_root=arguments.pop("project_root"),
            initial_context=dict(submission.get("context") or {}),
        )
        return RunPorts(**arguments, fleet=self.runner.fleet_ports()), options

    def _record_pickup(self) -> None:
        """The session was running on a runner that died (its lock was freed without an end): say so."""
        previous = self.entry.worker or "its previous runner"
        record = PipelineLifecycle(
            LifecycleEvent.INTERRUPTED, self.entry.submission.get("pipeline_name", ""),
            error=f"worker {previous} was lost (its session lock was freed without an end); picked up by "
            f"{self.runner.worker}, resuming from the latest checkpoint (from the beginning when it has none)",
        )  # fmt: skip
        append_record(self.store, self.session_id, record)

    def _watch(self, run: Any) -> threading.Event:
        """Stop the run on `orchestra cancel` (polled in the ledger) or when its lock's connection breaks."""
        return watch_session(run, self.runner._ledger, self.session_id, self.stop, self.cancelled)

    def _refuse(self, reason: str) -> dict[str, Any]:
        """The session cannot run on this worker: it ends failed, saying why (nothing else was recorded)."""
        pipeline = str(self.entry.submission.get("pipeline_name", ""))
        from orchestra_core.model.outcome import StageStatus

        with suppress(Exception):
            append_record(self.store, self.session_id, PipelineLifecycle(
                LifecycleEvent.FAILED, pipeline, status=StageStatus.FAIL, error=reason,
            ))  # fmt: skip
        self.runner._ledger.finish(self.session_id, self.runner.worker)
        return _outcome(self.session_id, "refused", "fail", reason)


def watch_session(
    run: Any, ledger: FleetLedger, session_id: str, stop: Cancellation, cancelled: threading.Event
) -> threading.Event:
    """Watch a running session: `orchestra cancel` (its ledger entry, polled) sets `cancelled` and cancels `stop`; a
    broken lock connection cancels `stop`. Set the returned event once the run ended."""
    done = threading.Event()
    watch = getattr(run.lease, "watch", None)
    if watch is not None:
        watch(lambda: stop.cancel("the session lock's database connection broke"))

    def poll() -> None:
        while not done.wait(CANCEL_POLL_S):
            with suppress(Exception):
                entry = ledger.get(session_id)
                if entry is not None and entry.cancel_requested:
                    cancelled.set()
                    stop.cancel(CANCEL_REASON)
                    return

    threading.Thread(target=poll, name=f"orchestra-cancel-{session_id}", daemon=True).start()
    return done


def _outcome(session_id: str, outcome: str, status: str, detail: str = "") -> dict[str, Any]:
    return {"session_id": session_id, "outcome": outcome, "status": status, "detail": detail}


__all__ = ["CANCEL_REASON", "FINAL", "SessionTaskRunner", "watch_session"]
