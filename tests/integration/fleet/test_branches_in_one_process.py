"""Parallel branches sent to a fleet, in one process: two "machines" (project directories with their own clones of
one remote) sharing a SQLite store, the in-memory dispatcher and ledger, real git. The branches run on the worker's
machine, travel back through the remote and are merged at the join as on one machine; a lost worker's branch runs
again; a branch nobody takes runs on the session's runner; a worker that cannot run it says why."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from orchestra_adapters.container import build_container, close_container, run_arguments
from orchestra_adapters.dependency_injection import providers
from orchestra_adapters.dispatch.branch_runner import open_branch_run
from orchestra_core.graph.dot_loader import parse_dot
from orchestra_core.model import records as r
from orchestra_core.pipeline import prepare_pipeline
from orchestra_core.ports.dispatcher import DispatchError, Task
from orchestra_core.ports.fleet import WorkerBeat
from orchestra_core.runs.branch_task import run_branch_task
from orchestra_core.runs.ports import FleetPorts, RunOptions, RunPorts
from orchestra_core.runs.start import begin, start_new
from orchestra_core.session.api import history
from orchestra_core.session.codec import decode_record
from orchestra_core.testing.dispatcher import InMemoryDispatcher
from orchestra_core.testing.fleet import InMemoryFleetLedger
from orchestra_core.testing.session_locks import InMemorySessionLocks
from tests.support.git_remote_repos import bare_remote, remote_branches
from tests.support.git_repos import git

PIPELINE = """digraph fan {
    start [shape=Mdiamond]; exit [shape=Msquare]
    fan [shape=component]
    a [shape=parallelogram, tool_command="echo from-a > a.txt"]
    b [shape=parallelogram, tool_command="SLOW_B; echo from-b > b.txt"]
    join [shape=tripleoctagon]
    start -> fan
    fan -> a -> join
    fan -> b -> join
    join -> exit
}
"""


def _yaml(store: Path, remote: Path) -> str:
    return (
        f"storage: {{backend: sqlite, path: '{store}'}}\n"
        f"workspace:\n  repos:\n    project: {{path: repo, remote: '{remote.as_uri()}', push: on_checkpoint}}\n"
    )


class Machines:
    """The session's machine (`parent`) and worker machines, each a project directory with its own clone."""

    def __init__(self, root: Path, slow_b: str = "true") -> None:
        self.root = root
        self.remote = bare_remote(root / "remote.git", {"README.md": "hello\n"})
        self.store_path = root / "shared" / "orchestra.db"
        self.locks = InMemorySessionLocks("parent")
        self.ledger = InMemoryFleetLedger()
        self.dispatcher = InMemoryDispatcher()
        self.pipeline = PIPELINE.replace("SLOW_B", slow_b)
        self.containers: list[Any] = []

    def container(self, name: str, holder: str, yaml: str | None = None) -> Any:
        project = self.root / name
        project.mkdir(exist_ok=True)
        (project / "orchestra.yaml").write_text(yaml or _yaml(self.store_path, self.remote), encoding="utf-8")
        (project / "fan.dot").write_text(self.pipeline, encoding="utf-8")
        container = build_container(config_path=project / "orchestra.yaml", cwd=project)
        container.session_locks.override(providers.Object(self.locks.runner(holder)))
        self.containers.append(container)
        return container

    def worker(self, name: str, *, yaml: str | None = None, queues: tuple[str, ...] = ("orchestra",)) -> Any:
        container = self.container(name, name, yaml)

        def run(task: Task) -> dict[str, Any]:
            return run_branch_task(task, self.ledger, name, lambda a: open_branch_run(container, a), poll_s=0.05)

        return self.dispatcher.serve(queues, run, name=name)

    def run_session(
        self, *, claim_after_s: float = 60.0, queues: tuple[str, ...] = ("orchestra",), grace_s: float = 15.0,
        resend_s: float = 30.0,
    ) -> tuple[Any, Any]:
        container = self.container("parent", "parent")
        graph = prepare_pipeline(parse_dot(self.pipeline, path="fan.dot")).graph
        arguments = run_arguments(container, graph=graph)
        options = RunOptions(settings=arguments.pop("settings"), project_root=arguments.pop("project_root"))
        fleet = FleetPorts(
            dispatcher=self.dispatcher, ledger=self.ledger, runner="parent", queues=queues, claim_after_s=claim_after_s,
            poll_s=0.02, no_worker_grace_s=grace_s, resend_after_s=resend_s,
        )  # fmt: skip
        ports = RunPorts(**arguments, fleet=fleet)
        from orchestra_core.runs.pipeline_run import PipelineRun

        store = ports.store
        assert store is not None
        run = PipelineRun(graph, begin(store, start_new(store, graph, Path("fan.dot"), self.pipeline)), ports, options)
        try:
            return run.execute(), run
        finally:
            run.close()

    def close(self) -> None:
        self.dispatcher.close()
        for container in self.containers:
            close_container(container)


@pytest.fixture
def machines(tmp_path: Path) -> Iterator[Machines]:
    found = Machines(tmp_path)
    yield found
    found.close()


def _records(store: Any, session: str) -> list[object]:
    return [decode_record(turn) for turn in history(store, session)]


def _fan_in(store: Any, session: str) -> r.ParallelExecution:
    return next(
        record for record in _records(store, session)
        if isinstance(record, r.ParallelExecution) and record.event is r.ParallelEvent.FAN_IN
    )  # fmt: skip


def _session_tree(run: Any, name: str) -> set[str]:
    branch = run.workspace.contexts["project"].branch_name
    return set(git(run.workspace.contexts["project"].repo_root, "ls-tree", "--name-only", branch).split())


def test_branches_run_on_the_worker_and_are_merged_at_the_join(machines: Machines) -> None:
    worker = machines.worker("w1")
    result, run = machines.run_session()
    assert result.succeeded, result.failure_reason
    assert sorted(task.payload["branch"] for task in worker.ran) == ["fan:a", "fan:b"]
    assert {"a.txt", "b.txt", "README.md"} <= _session_tree(run, "parent")
    entries = {entry.branch: entry for entry in machines.ledger.branches(run.session_id)}
    assert {entry.state for entry in entries.values()} == {"done"} and {e.worker for e in entries.values()} == {"w1"}
    store = run.ports.store
    fan_in = _fan_in(store, run.session_id)
    assert sorted(fan_in.branch_session_ids) == sorted(entry.line for entry in entries.values())
    for entry in entries.values():  # each branch's own session holds its node's record, written by the worker
        nodes = [rec.node_id for rec in _records(store, entry.line) if isinstance(rec, r.NodeExecution)]
        assert entry.branch.split(":")[1] in nodes
    on_remote = remote_branches(machines.remote)
    assert {entry.line for entry in entries.values()}  # the branches travelled through the remote
    assert any(name.endswith("--fan-a") for name in on_remote) and any(name.endswith("--fan-b") for name in on_remote)
    worktrees = machines.root / "w1" / ".orchestra" / "worktrees"
    assert not any(path.name == "project" for path in worktrees.rglob("project"))  # the worker cleaned up


def test_a_branch_no_worker_takes_runs_on_the_sessions_runner(machines: Machines) -> None:
    result, run = machines.run_session(claim_after_s=0.05)
    assert result.succeeded, result.failure_reason
    entries = machines.ledger.branches(run.session_id)
    assert {entry.worker for entry in entries} == {"parent"} and {entry.state for entry in entries} == {"done"}
    assert {"a.txt", "b.txt"} <= _session_tree(run, "parent")
    assert machines.dispatcher.queued() == []  # the tasks nobody took were withdrawn


def test_a_branch_of_a_queue_no_live_worker_serves_fails_saying_so(machines: Machines) -> None:
    machines.pipeline = machines.pipeline.replace('b [shape=parallelogram,', 'b [shape=parallelogram, queue="gpu",')
    machines.ledger.beat(WorkerBeat("w-cpu", ("orchestra",), 1))
    result, run = machines.run_session(claim_after_s=0.05, grace_s=0.3)
    assert result.node_outcomes["fan"].status.value == "partial_success"  # wait_all: a failed branch
    reasons = {entry["id"]: entry["failure_reason"] for entry in result.context["parallel.results"]}
    assert reasons["a"] == "" and "no live worker serves queue 'gpu'" in reasons["b"]
    assert "orchestra worker --queue gpu" in reasons["b"]
    entry = machines.ledger.get_branch(run.session_id, "fan:b")
    assert entry is not None and entry.queue == "gpu" and entry.cancel_requested  # a late worker will not run it


def test_a_main_line_node_naming_a_queue_runs_on_that_queues_worker(machines: Machines) -> None:
    machines.pipeline = """digraph fan {
        start [shape=Mdiamond]; exit [shape=Msquare]
        train [shape=parallelogram, queue="gpu", tool_command="echo trained > model.txt"]
        check [shape=parallelogram, tool_command="test -f model.txt && echo ok > checked.txt"]
        start -> train -> check -> exit
    }"""
    gpu = machines.worker("g1", queues=("gpu",))
    result, run = machines.run_session()
    assert result.succeeded, result.failure_reason
    assert [(task.payload["node"], task.payload["single"]) for task in gpu.ran] == [("train", True)]
    assert "model.txt" in _session_tree(run, "parent")
    assert (run.workspace.contexts["project"].worktree_path / "checked.txt").exists()  # merged before check ran
    assert "ran on queue gpu" in result.node_outcomes["train"].notes
    entry = machines.ledger.get_branch(run.session_id, "train@gpu")
    assert entry is not None and entry.worker == "g1" and entry.state == "done"
    nodes = [rec.node_id for rec in _records(run.ports.store, entry.line) if isinstance(rec, r.NodeExecution)]
    assert "train" in nodes  # the worker recorded the node's execution in its own line


def test_a_branch_whose_message_was_lost_is_sent_again(machines: Machines) -> None:
    machines.pipeline = machines.pipeline.replace('b [shape=parallelogram,', 'b [shape=parallelogram, queue="gpu",')
    container = machines.container("g1", "g1")
    lost: list[str] = []

    def loses_the_first(task: Task) -> dict[str, Any]:
        if not lost:  # reserved by a worker that died before it started it: it never runs
            lost.append(task.task_id)
            return {"outcome": "lost"}
        return run_branch_task(task, machines.ledger, "g1", lambda a: open_branch_run(container, a), poll_s=0.05)

    gpu = machines.dispatcher.serve(("gpu",), loses_the_first, name="g1")
    machines.worker("w1")
    machines.ledger.beat(WorkerBeat("g1", ("gpu",), 2))  # alive, with free slots
    result, run = machines.run_session(claim_after_s=0.05, grace_s=0.2, resend_s=0.3)
    assert result.succeeded, result.failure_reason
    entry = machines.ledger.get_branch(run.session_id, "fan:b")
    assert entry is not None and entry.state == "done" and entry.worker == "g1" and entry.pickups == 0
    assert len(gpu.ran) == 2 and gpu.ran[1].task_id == entry.task_id != lost[0]


def test_branches_run_here_when_the_broker_fails(machines: Machines) -> None:
    def broken(task: Task) -> Any:
        raise DispatchError("dispatch.broker redis://127.0.0.1:1/0: cannot queue the task: refused")

    machines.dispatcher.submit = broken  # type: ignore[method-assign]
    result, run = machines.run_session()
    assert result.succeeded, result.failure_reason
    assert {"a.txt", "b.txt"} <= _session_tree(run, "parent")
    assert all(entry.cancel_requested for entry in machines.ledger.branches(run.session_id))


def test_a_worker_without_the_repo_reports_the_branch_failed(machines: Machines) -> None:
    machines.worker("w1", yaml=f"storage: {{backend: sqlite, path: '{machines.store_path}'}}\n")
    result, _run = machines.run_session()
    assert not result.succeeded
    assert "has no workspace repo 'project'" in str(result.context.get("parallel.results"))


def test_a_branch_whose_worker_is_lost_runs_again_elsewhere(machines: Machines, tmp_path: Path) -> None:
    lost = Machines(tmp_path / "lost", slow_b="sleep 3")
    try:
        _lost_worker_case(lost)
    finally:
        lost.close()


def _lost_worker_case(machines: Machines) -> None:
    doomed_locks = machines.locks.runner("w1")
    doomed = machines.container("w1", "w1")
    died = threading.Event()
    workers: list[Any] = []

    def doomed_worker(task: Task) -> dict[str, Any]:
        if task.payload["branch"] == "fan:b" and not died.is_set():
            kill = (machines, task, doomed_locks, died, workers[0])
            threading.Thread(target=_kill_when_running, args=kill, daemon=True).start()
        return run_branch_task(task, machines.ledger, "w1", lambda a: open_branch_run(doomed, a), poll_s=0.05)

    workers.append(machines.dispatcher.serve(("orchestra",), doomed_worker, name="w1"))
    result_box: list[Any] = []
    session_thread = threading.Thread(target=lambda: result_box.append(machines.run_session()))
    session_thread.start()
    assert died.wait(60), "the doomed worker never ran branch b"
    machines.worker("w2")
    session_thread.join(120)
    result, run = result_box[0]
    assert result.succeeded, result.failure_reason
    entry = machines.ledger.get_branch(run.session_id, "fan:b")
    assert entry is not None and entry.pickups == 1 and entry.worker == "w2"
    store = run.ports.store
    children = [info.session_id for info in store.child_sessions(run.session_id)]
    lost_line = next(line for line in children if line not in _fan_in(store, run.session_id).branch_session_ids)
    said = [
        rec for rec in _records(store, lost_line)
        if isinstance(rec, r.PipelineLifecycle) and rec.event is r.LifecycleEvent.INTERRUPTED
    ]  # fmt: skip
    assert len(said) == 1 and "worker w1 was lost" in said[0].error and entry.line in said[0].error
    interrupted = [
        rec.node_id for rec in _records(store, lost_line)
        if isinstance(rec, r.NodeExecution) and rec.event is r.NodeEvent.INTERRUPTED
    ]  # fmt: skip
    assert interrupted == ["b"]
    assert {"a.txt", "b.txt"} <= _session_tree(run, "parent")


def _kill_when_running(
    machines: Machines, task: Task, locks: InMemorySessionLocks, died: threading.Event, worker: Any
) -> None:
    """Free the worker's locks (as its death would) once it runs the branch's node, and let it take no more work;
    its ledger entry stays `running`."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        entry = machines.ledger.get_branch(task.session_id, task.payload["branch"])
        if entry is not None and entry.state == "running":
            time.sleep(0.5)
            locks.crash()
            died.set()
            worker.stop()
            return
        time.sleep(0.02)



class _RequeueAfterTheEnd(InMemoryFleetLedger):
    """A ledger on which the runner's requeue of a branch comes just after its worker finished it (the race of a
    worker whose lock is seen free in its last moments): the requeue then finds nothing to take."""

    def requeue_branch(self, session_id: str, branch: str, old_task_id: str, new_task_id: str, line: str) -> bool:
        deadline = time.monotonic() + 30
        while (entry := self.get_branch(session_id, branch)) is not None and entry.state != "done":
            assert time.monotonic() < deadline, "the branch never finished"
            time.sleep(0.02)
        return super().requeue_branch(session_id, branch, old_task_id, new_task_id, line)


def test_a_branch_that_finishes_while_its_runner_looks_lost_keeps_its_line(tmp_path: Path) -> None:
    machines = Machines(tmp_path, slow_b="sleep 2")
    machines.ledger = _RequeueAfterTheEnd()
    try:
        locks = machines.locks.runner("w1")
        container = machines.container("w1", "w1")

        def worker(task: Task) -> dict[str, Any]:
            if task.payload["branch"] == "fan:b":  # its lock looks free while it still runs
                threading.Thread(target=_free_locks_when_running, args=(machines, task, locks), daemon=True).start()
            return run_branch_task(task, machines.ledger, "w1", lambda a: open_branch_run(container, a), poll_s=0.05)

        machines.dispatcher.serve(("orchestra",), worker, name="w1")
        result, run = machines.run_session()
        assert result.succeeded, result.failure_reason
        store = run.ports.store
        entry = machines.ledger.get_branch(run.session_id, "fan:b")
        assert entry is not None and entry.pickups == 0 and entry.state == "done"
        lines = _fan_in(store, run.session_id).branch_session_ids
        assert entry.line in lines  # the line whose result the join used, not the unused fork made for a rerun
        assert {"a.txt", "b.txt"} <= _session_tree(run, "parent")
    finally:
        machines.close()


def _free_locks_when_running(machines: Machines, task: Task, locks: InMemorySessionLocks) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        entry = machines.ledger.get_branch(task.session_id, task.payload["branch"])
        if entry is not None and entry.state == "running" and locks.holder(entry.line):
            time.sleep(0.3)
            locks.crash()
            return
        time.sleep(0.02)
