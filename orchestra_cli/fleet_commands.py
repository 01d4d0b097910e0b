"""The fleet's commands behind orchestra_cli/commands/fleet.py: worker, submit, cancel, and the fleet view of
`orchestra status`."""

from __future__ import annotations

import sys
import threading
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from orchestra_cli.errors import EXIT_FAILED, EXIT_OK, fail, user_errors

if TYPE_CHECKING:  # the fleet's modules load only when a fleet command runs
    from collections.abc import Mapping

    from orchestra_core.ports.dispatcher import Task, TaskRunner

FINAL_STATUSES = ("success", "fail", "cancelled")


def worker(*, concurrency: int, queues: list[str], name: str | None, config: Path | None) -> int:
    """`orchestra worker`: check everything it needs, then serve the queues until stopped."""
    from orchestra_adapters.container import build_container, close_container
    from orchestra_cli.options import require_config_file

    if concurrency < 1:
        raise fail("--concurrency must be at least 1")
    for queue in queues:
        _check_queue(queue)
    require_config_file(config)
    cwd = Path.cwd()
    with user_errors():
        container = build_container(config_path=config, cwd=cwd)
        fleet, store, locks = _worker_ports(container)
    try:
        return _serve(container, fleet, store, locks, concurrency=concurrency, queues=queues, name=name, config=config, cwd=cwd)
    finally:
        fleet.close()
        close_container(container)


def _worker_ports(container: Any) -> tuple[Any, Any, Any]:
    """The fleet, the store and the locks, each reached once (bad config or an unreachable server: exit 2)."""
    from orchestra_adapters.dispatch.fleet import Fleet, check_worker_repos

    settings = container.settings()
    fleet = Fleet(settings)
    try:
        check_worker_repos(settings)
        container.notifier()  # a variable a `notify:` target needs that is not set: exit 2 now, not in every session
        _prepare_repos(container)
        return fleet, container.session_store(), container.session_locks()
    except BaseException:
        fleet.close()
        raise


def _prepare_repos(container: Any) -> None:
    """Clone (or fetch) every workspace repo from its remote now: a worker that cannot reach one stops at once."""
    from orchestra_core.workspace.remotes import RemoteSetup

    settings = container.settings()
    if settings.workspace.repos:
        RemoteSetup(settings.workspace.repos, container.git_remotes(), container.git(), settings.base_dir).prepare()


def _serve(
    container: Any, fleet: Any, store: Any, locks: Any, *, concurrency: int, queues: list[str], name: str | None,
    config: Path | None, cwd: Path,
) -> int:
    from orchestra_adapters.container import build_container
    from orchestra_adapters.dispatch.branch_runner import BranchTaskRunner
    from orchestra_adapters.dispatch.celery_app import set_task_runner
    from orchestra_adapters.dispatch.session_runner import SessionTaskRunner
    from orchestra_adapters.dispatch.worker import Pickup, WorkerDuties, default_worker_name

    settings = container.settings()
    name = name or default_worker_name()
    queues = list(dict.fromkeys(queues or [settings.dispatch.queue]))
    def make_container() -> Any:  # one per task; its session locks name this worker as their holder
        from orchestra_adapters.dependency_injection import providers
        from orchestra_adapters.locks.postgres_session_locks import PostgresSessionLocks
        from orchestra_adapters.storage.postgres.dsn import configured_dsn

        task_container = build_container(config_path=config, cwd=cwd)
        dsn = configured_dsn(task_container.settings().storage)
        task_container.session_locks.override(providers.Singleton(PostgresSessionLocks, dsn, holder=name))
        return task_container

    runner = SessionTaskRunner(make_container, fleet.ledger, name, lambda: fleet.run_ports(name, queues))
    branches = BranchTaskRunner(make_container, fleet.ledger, name)
    set_task_runner(_logged(name, lambda task: branches(task) if task.kind == "branch" else runner(task)))
    pickup = Pickup(
        fleet.ledger, store, locks, fleet.dispatcher, runner.running,
        on_send=lambda session, why: _say(f"{name}: session {session} {why}"),
    )  # fmt: skip

    def running() -> dict[str, str]:
        return {**runner.running(), **branches.running()}

    duties = WorkerDuties(name, queues, concurrency, fleet.ledger, running, pickup, float(settings.dispatch.pickup_interval))
    duties.start()
    print(
        f"worker {name}: queues {', '.join(queues)}; {concurrency} at once; broker {fleet.broker_location}; "
        f"store {store.location}",
        file=sys.stderr, flush=True,
    )  # fmt: skip
    argv = [
        "--quiet", "worker", "--pool", "threads", "--concurrency", str(concurrency), "--queues", ",".join(queues),
        "--hostname", name, "--without-gossip", "--without-mingle", "--loglevel", "WARNING",
    ]  # fmt: skip
    import warnings

    from celery.exceptions import SecurityWarning

    warnings.filterwarnings("ignore", category=SecurityWarning)  # containers and CI run workers as root
    try:
        fleet.app.worker_main(argv)
    except SystemExit as done:
        return done.code if isinstance(done.code, int) else EXIT_OK
    finally:
        duties.stop()
    return EXIT_OK


def _logged(name: str, run: TaskRunner) -> TaskRunner:
    """`run` telling the worker's log when each task starts and how it ended."""

    def run_task(task: Task) -> Mapping[str, Any]:
        what = f"branch {task.payload.get('branch', '?')} of session {task.session_id}" if task.kind == "branch" else f"session {task.session_id}"
        _say(f"{name}: {what}: task {task.task_id[:12]} started")
        try:
            result = run(task)
        except BaseException as error:
            _say(f"{name}: {what}: task {task.task_id[:12]} raised {type(error).__name__}: {error}")
            raise
        ended = " ".join(str(result[key]) for key in ("outcome", "status", "detail") if result.get(key))
        _say(f"{name}: {what}: task {task.task_id[:12]} {ended}")
        return result

    return run_task


_SAY_LOCK = threading.Lock()


def _say(line: str) -> None:
    # One write per line, under a lock: print() writes the text and the line break apart, and two task threads
    # finishing at once ran their lines together.
    with _SAY_LOCK:
        sys.stderr.write(f"{time.strftime('%H:%M:%S', time.gmtime())} {line}\n")
        sys.stderr.flush()


def submit(
    pipeline: Path, *, set_values: tuple[str, ...], auto_approve: bool, queue: str | None, json_output: bool, config: Path | None
) -> int:
    """`orchestra submit`: validate, record the session, queue it; print its id."""
    from orchestra_adapters.container import build_container, close_container
    from orchestra_adapters.dispatch.fleet import Fleet
    from orchestra_cli.options import require_config_file
    from orchestra_cli.runtime.execute import prepare_graph
    from orchestra_cli.runtime.options import RunOptions, parse_set_values
    from orchestra_core.graph.dot_loader import read_pipeline_text
    from orchestra_core.ports.dispatcher import Task
    from orchestra_core.runs.start import begin, start_new

    if queue is not None:
        _check_queue(queue)
    require_config_file(config)
    with user_errors():
        container = build_container(config_path=config, pipeline_path=pipeline)
        try:
            settings = container.settings()
            context = parse_set_values(set_values)
            fleet = Fleet(settings)
            try:
                text = read_pipeline_text(pipeline)
                graph = prepare_graph(text, pipeline, RunOptions(pipeline, json_output=json_output), rules=container.run_rules())
                if graph is None:
                    return EXIT_FAILED
                store = container.session_store()
                start = begin(store, start_new(store, graph, pipeline, text))
                chosen = queue or graph.get("queue") or settings.dispatch.queue
                task_id = uuid.uuid4().hex
                submission = {
                    "pipeline_path": str(pipeline.resolve()), "pipeline_blob": start.source.blob,
                    "pipeline_name": graph.name, "context": context, "auto_approve": auto_approve,
                    "repos": {name: repo.remote or "" for name, repo in settings.workspace.repos.items()},
                }  # fmt: skip
                fleet.ledger.add(start.session_id, task_id, chosen, submission)
                fleet.dispatcher.submit(Task("session", start.session_id, chosen, task_id=task_id))
            finally:
                fleet.close()
        finally:
            close_container(container)
    if json_output:
        from orchestra_cli.output import print_json

        print_json({"session_id": start.session_id, "queue": chosen, "task_id": task_id})
    else:
        typer.echo(f"session {start.session_id}")
        typer.echo(f"queued  on {chosen}; follow it with: orchestra attach {start.session_id}")
    return EXIT_OK


def _check_queue(queue: str) -> None:
    from orchestra_core.validation.queues import QUEUE_NAME

    if not QUEUE_NAME.fullmatch(queue):
        raise fail(f"--queue {queue!r} is not a queue name (letters, digits, '.', '_' and '-', at most 100)")


def cancel(session: str, *, wait: float, json_output: bool, config: Path | None) -> int:
    """`orchestra cancel SESSION`."""
    from orchestra_adapters.container import build_container, close_container
    from orchestra_cli.options import require_config_file

    require_config_file(config)
    with user_errors():
        container = build_container(config_path=config)
        try:
            status = _cancel(container, session, wait)
        finally:
            close_container(container)
    if json_output:
        from orchestra_cli.output import print_json

        print_json({"session_id": session, "status": status})
    else:
        typer.echo(f"session {session} {status}")
    ended = status in FINAL_STATUSES or status.startswith("already ended")  # exit 0 either way, as documented
    return EXIT_OK if ended else EXIT_FAILED


def _cancel(container: Any, session: str, wait: float) -> str:
    """Revoke the session's task, then: no runner holds it, so record it cancelled here; or its runner holds it,
    and stops on its own within a second (it polls the ledger): wait for that. Returns the final status."""
    from orchestra_cli.runtime.execute import existing_store
    from orchestra_core.model.records import LifecycleEvent, PipelineLifecycle
    from orchestra_core.ports.dispatcher import TaskHandle
    from orchestra_core.ports.session_locks import SessionBusyError
    from orchestra_core.session.api import append_record

    store = existing_store(container, session)
    info = store.get_session(session)
    if info.status.value in FINAL_STATUSES:
        return f"already ended ({info.status.value})" if info.status.value != "cancelled" else "cancelled"
    settings = container.settings()
    entry = None
    fleet = None
    if settings.dispatch.fleet:
        from orchestra_adapters.dispatch.fleet import Fleet

        fleet = Fleet(settings)
    try:
        if fleet is not None:
            entry = fleet.ledger.request_cancel(info.session_id)
            if entry is not None and entry.task_id:  # a session `orchestra run` runs has no task
                fleet.dispatcher.cancel(TaskHandle(entry.task_id, "session", info.session_id, entry.queue))
        locks = container.session_locks()
        try:
            lease = locks.acquire(info.session_id)
        except SessionBusyError:
            if entry is None:  # an `orchestra run` of this project: asked through its attach channel
                _request_cancel(container, store, locks, info.session_id)
            return _wait_cancelled(store, locks, info.session_id, wait)
        try:
            append_record(store, info.session_id, PipelineLifecycle(
                LifecycleEvent.CANCELLED, info.metadata.pipeline, error="cancelled with orchestra cancel",
            ))  # fmt: skip
            if fleet is not None and entry is not None:
                fleet.ledger.finish(info.session_id, "")
        finally:
            lease.release()
        return "cancelled"
    finally:
        if fleet is not None:
            fleet.close()


def _request_cancel(container: Any, store: Any, locks: Any, session: str) -> None:
    from orchestra_adapters.console.cancel_watch import NotRunningError, request_cancel
    from orchestra_core.model.errors import OrchestraError
    from orchestra_core.model.layout import ProjectLayout

    state_dir = ProjectLayout(Path(container.project_root())).state_dir
    try:
        request_cancel(store, locks, state_dir, session, "orchestra cancel")
    except NotRunningError as error:
        raise OrchestraError(str(error)) from None


def _wait_cancelled(store: Any, locks: Any, session: str, wait: float) -> str:
    """How the run ended, once its runner let go of the session: a runner records how its run ended before it
    releases the lock, and a cancelled run's last word is `cancelled` (a status read before that may still be the
    `fail` of the stopped engine)."""
    deadline = time.monotonic() + max(wait, 0)
    while True:
        status = store.get_session(session).status.value
        if (status in FINAL_STATUSES and locks.holder(session) is None) or time.monotonic() >= deadline:
            return "cancelled" if status == "cancelled" else (f"already ended ({status})" if status in FINAL_STATUSES else f"still {status}")
        time.sleep(0.1)


def fleet_view(container: Any, sessions: list[str]) -> dict[str, Any] | None:
    """`orchestra status`'s view of the fleet (None without one): each worker's last heartbeat and what it runs,
    and for each of `sessions` handed to the fleet, its state, the worker holding its lock and the node it runs."""
    settings = container.settings()
    if not settings.dispatch.fleet or settings.storage.backend != "postgres":
        return None
    from datetime import UTC, datetime

    from orchestra_adapters.dispatch.ledger import PostgresFleetLedger
    from orchestra_adapters.storage.postgres.dsn import configured_dsn

    ledger = PostgresFleetLedger(configured_dsn(settings.storage))
    try:
        now = datetime.now(UTC)
        workers = [
            {
                "name": beat.name, "queues": list(beat.queues), "concurrency": beat.concurrency,
                "running": sorted(beat.running), "last_heartbeat_s": round((now - beat.beat_at).total_seconds(), 1)
                if beat.beat_at else None,
            }
            for beat in ledger.workers()
        ]  # fmt: skip
        held = container.session_locks().held_sessions()
        store = container.session_store()
        rows = []
        for session in sessions:
            entry = ledger.get(session)
            if entry is None:
                continue
            branches = [
                {"branch": b.branch, "state": b.state, "queue": b.queue, "worker": b.worker or None, "pickups": b.pickups}
                for b in sorted(ledger.branches(session), key=lambda b: b.branch)
            ]  # fmt: skip
            rows.append({
                "session_id": session, "state": entry.state, "queue": entry.queue, "worker": held.get(session),
                "node": _running_node(store, session) if session in held else None, "pickups": entry.pickups,
                "cancel_requested": entry.cancel_requested, "branches": branches,
            })  # fmt: skip
        return {"workers": workers, "sessions": rows}
    finally:
        ledger.close()


def _running_node(store: Any, session: str) -> str | None:
    """The node a session runs now: the newest NodeExecution start without an end, among its latest turns."""
    from orchestra_core.model.records import NodeEvent, NodeExecution
    from orchestra_core.session.turn_view import decode_fields

    ended: set[str] = set()
    for turn in reversed(store.turns(session, limit=64).turns):
        record = decode_fields(turn)
        if isinstance(record, NodeExecution):
            if record.event is NodeEvent.STARTED and record.node_id not in ended:
                return str(record.node_id)
            ended.add(record.node_id)
    return None


def print_fleet_view(view: dict[str, Any]) -> None:
    """The fleet section of `orchestra status`."""
    typer.echo("")
    typer.echo(f"workers ({len(view['workers'])})")
    for worker in view["workers"]:
        age = worker["last_heartbeat_s"]
        typer.echo(
            f"  {worker['name']}  queues {','.join(worker['queues'])}  running {len(worker['running'])}/"
            f"{worker['concurrency']}  heartbeat {age}s ago" + ("  (silent: lost?)" if age is not None and age > 30 else "")
        )
    for row in view["sessions"]:
        where = f"on {row['worker']}, node {row['node'] or '-'}" if row["worker"] else row["state"]
        extra = f"  picked up {row['pickups']}x" if row["pickups"] else ""
        typer.echo(f"  session {row['session_id']}: {where} (queue {row['queue']}){extra}")
        for branch in row["branches"] if row["state"] != "done" else []:
            runs = f"on {branch['worker']}" if branch["worker"] else branch["state"]
            again = f", sent again {branch['pickups']}x after a lost worker" if branch["pickups"] else ""
            typer.echo(f"    branch {branch['branch']}: {runs} ({branch['state']}, queue {branch['queue']}{again})")
