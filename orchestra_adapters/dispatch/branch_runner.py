"""What a fleet worker does with a branch task: build the branch's run from this worker's orchestra.yaml and the
pipeline its session recorded, then let the core decide and run it (`orchestra_core.runs.branch_task`)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

from orchestra_core.model.errors import OrchestraError
from orchestra_core.ports.dispatcher import Task
from orchestra_core.ports.fleet import FleetLedger
from orchestra_core.runs.branch_run import BranchRun
from orchestra_core.runs.fleet_payloads import BranchAssignment


class BranchTaskRunner:
    """Runs the branch tasks of one worker process (any number at once, one per Celery slot)."""

    def __init__(self, make_container: Callable[[], Any], ledger: FleetLedger, worker: str) -> None:
        self._make_container = make_container
        self._ledger = ledger
        self.worker = worker
        self._running: dict[str, str] = {}
        self._lock = threading.Lock()

    def running(self) -> dict[str, str]:
        """`<session> <branch>` -> pipeline name of the branches this worker runs now."""
        with self._lock:
            return dict(self._running)

    def __call__(self, task: Task) -> Mapping[str, Any]:
        from orchestra_adapters.container import close_container
        from orchestra_core.runs.branch_task import run_branch_task

        container = self._make_container()
        key = f"{task.session_id} {task.payload.get('branch', '?')}"
        with self._lock:
            self._running[key] = str(task.payload.get("node", ""))
        try:
            return run_branch_task(task, self._ledger, self.worker, lambda assignment: open_branch_run(container, assignment))
        finally:
            with self._lock:
                self._running.pop(key, None)
            close_container(container)


def open_branch_run(container: Any, assignment: BranchAssignment) -> BranchRun:
    """The branch's run on this worker: the pipeline as its session recorded it, this worker's settings and ports.

    Raises:
        OrchestraError: The pipeline does not load or validate here (the message names it).
        SessionBusyError: Another runner holds the branch.
    """
    from orchestra_adapters.container import run_arguments
    from orchestra_core.graph.dot_loader import parse_dot
    from orchestra_core.interview import AutoApproveInterviewer
    from orchestra_core.pipeline import prepare_pipeline
    from orchestra_core.runs.ports import RunOptions, RunPorts
    from orchestra_core.validation import ValidationError

    store = container.session_store()
    path = assignment.pipeline_path or "pipeline.dot"
    text = store.get_blob(assignment.pipeline_blob).decode("utf-8")
    prepared = prepare_pipeline(parse_dot(text, path=path), extra_rules=container.run_rules())
    if prepared.errors:
        raise OrchestraError(f"{path}: {ValidationError(list(prepared.diagnostics))}")
    interviewer = AutoApproveInterviewer() if assignment.auto_approve else None
    arguments = run_arguments(container, interviewer=interviewer, graph=prepared.graph)
    options = RunOptions(settings=arguments.pop("settings"), project_root=arguments.pop("project_root"))
    return BranchRun(prepared.graph, assignment, RunPorts(**arguments), options)


__all__ = ["BranchTaskRunner", "open_branch_run"]
