"""Benchmark the fleet on loopback: dispatch overhead per task, the throughput of sessions whose scripted model
answers after 200 ms on 1, 2 and 4 real `orchestra worker` processes, and what sending a fan-out's branches to the
fleet costs against running them in threads of `orchestra run` (the branches' git branches pushed, fetched and merged
through a file:// remote). Prints JSON.

It starts its own redis-server and PostgreSQL (Debian's, as the tests do; `make install` installs them) in
temporary directories and stops them after.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.fleet_servers import PostgresCluster, RedisServer  # noqa: E402

ORCHESTRA = Path(sys.executable).with_name("orchestra")
PIPELINE = """digraph bench {
    start [shape=Mdiamond]; exit [shape=Msquare]
    plan [prompt="Plan"]; build [prompt="Build"]; check [prompt="Check"]
    start -> plan -> build -> check -> exit
}
"""


def dispatch_overhead(broker: str, tasks: int) -> dict[str, float]:
    """Send a no-op task to a worker thread in this process and wait for its result, `tasks` times, one after
    another: the round trip the fleet adds to every task (broker, worker, result backend), on loopback."""
    import threading

    from orchestra_adapters.dispatch.celery_app import make_celery, set_task_runner
    from orchestra_adapters.dispatch.celery_dispatcher import CeleryDispatcher
    from orchestra_core.model.settings import DispatchSettings
    from orchestra_core.ports.dispatcher import Task

    settings = DispatchSettings(broker=broker, queue="bench")
    app = make_celery(broker, settings)
    set_task_runner(lambda task: {"ok": task.session_id})
    worker = app.Worker(pool="threads", concurrency=1, queues=["bench"], without_gossip=True, without_mingle=True,
                        without_heartbeat=True, loglevel="ERROR", quiet=True)  # fmt: skip
    threading.Thread(target=worker.start, daemon=True).start()
    dispatcher = CeleryDispatcher(app, broker, "bench")
    dispatcher.result(dispatcher.submit(Task("session", "warm-up", "bench")), timeout=60)
    times = []
    for index in range(tasks):
        started = time.perf_counter()
        result = dispatcher.result(dispatcher.submit(Task("session", str(index), "bench")), timeout=30)
        times.append((time.perf_counter() - started) * 1000)
        assert result == {"ok": str(index)}
    worker.stop(in_sighandler=False)
    return {
        "tasks": tasks, "median_ms": round(statistics.median(times), 2),
        "p90_ms": round(sorted(times)[int(len(times) * 0.9) - 1], 2), "min_ms": round(min(times), 2),
    }  # fmt: skip


def throughput(root: Path, dsn: str, broker: str, workers: int, sessions: int, delay: float) -> dict[str, float]:
    """Submit `sessions` sessions (three LLM nodes each, every model call answering after `delay` s), then start
    `workers` worker processes of concurrency 1 and time them from the workers' start to the last session's end (the
    submits, one `orchestra submit` process each, are not timed: on this machine each costs about a second of CPU,
    which would otherwise be what is measured)."""
    from orchestra_adapters.storage.postgres.store import PostgresSessionStore

    project = root / f"p{workers}"
    project.mkdir()
    (project / "bench.dot").write_text(PIPELINE)
    (project / "cassette.yaml").write_text(f'default: "Done."\ndelay: {delay}\n')
    (project / "orchestra.yaml").write_text(
        "providers:\n  default: scripted\n  scripted:\n    cassette: cassette.yaml\nbackend: langgraph\n"
        f"storage: {{backend: postgres, dsn: '{dsn}'}}\ndispatch: {{broker: '{broker}', queue: q{workers}}}\n"
    )
    env = {**os.environ, "NO_COLOR": "1"}
    ids = []
    for _ in range(sessions):
        done = subprocess.run([str(ORCHESTRA), "submit", "bench.dot", "--json"], cwd=project, env=env,
                              capture_output=True, text=True, check=True)  # fmt: skip
        ids.append(json.loads(done.stdout)["session_id"])
    store = PostgresSessionStore(dsn)
    started = time.perf_counter()
    procs = [
        subprocess.Popen([str(ORCHESTRA), "worker", "-c", "1", "--name", f"b{workers}-{n}"], cwd=project, env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        for n in range(workers)
    ]
    try:
        deadline = time.monotonic() + 600
        while any(store.get_session(s).status.value not in ("success", "fail") for s in ids):
            if time.monotonic() > deadline:
                raise SystemExit("sessions did not end within 600 s")
            time.sleep(0.05)
        elapsed = time.perf_counter() - started
        failed = [s for s in ids if store.get_session(s).status.value != "success"]
        return {"workers": workers, "sessions": sessions, "seconds": round(elapsed, 2),
                "sessions_per_minute": round(sessions / elapsed * 60, 1), "failed": len(failed)}  # fmt: skip
    finally:
        store.close()
        for proc in procs:
            proc.kill()
            proc.wait()


FAN_OUT = """digraph fan {
    start [shape=Mdiamond]; exit [shape=Msquare]
    fan [shape=component, max_parallel=8]
    join [shape=tripleoctagon]
    start -> fan
    BRANCHES
    join -> exit
}
"""


def branch_cost(root: Path, dsn: str, broker: str, branches: int, work_s: float, runs: int) -> dict[str, object]:
    """`orchestra run` of one fan-out of `branches` tool branches (each writes a file, after `work_s` of sleep),
    `runs` times with `dispatch.branches: local` (threads of the command) and `runs` times with the branches sent to
    two workers of concurrency `branches` // 2 (claim_after 60 s: the workers run them all); median wall times."""
    from tests.support.git_remote_repos import bare_remote

    remote = bare_remote(root / "fan-remote.git")
    body = "\n    ".join(
        f'b{n} [shape=parallelogram, tool_command="sleep {work_s}; echo {n} > b{n}.txt"]; fan -> b{n} -> join'
        for n in range(branches)
    )
    env = {**os.environ, "NO_COLOR": "1"}
    timings: dict[str, list[float]] = {"local": [], "fleet": []}
    ran_by: dict[str, set[str]] = {"local": set(), "fleet": set()}
    procs = []
    try:
        for mode in ("local", "fleet"):
            project = root / f"fan-{mode}"
            project.mkdir()
            (project / "fan.dot").write_text(FAN_OUT.replace("BRANCHES", body))
            (project / "orchestra.yaml").write_text(
                f"storage: {{backend: postgres, dsn: '{dsn}'}}\n"
                f"dispatch: {{broker: '{broker}', queue: fan, branches: {mode}, claim_after: 60s}}\n"
                f"workspace:\n  repos:\n    project: {{path: repo, remote: '{remote.as_uri()}', push: on_checkpoint}}\n"
            )
            if mode == "fleet":
                for n in range(2):
                    worker = root / f"fan-worker-{n}"
                    worker.mkdir()
                    (worker / "orchestra.yaml").write_text((project / "orchestra.yaml").read_text())
                    procs.append(subprocess.Popen(
                        [str(ORCHESTRA), "worker", "-c", str(max(branches // 2, 1)), "--name", f"fan-{n}"], cwd=worker,
                        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                    ))  # fmt: skip
                time.sleep(5)  # the workers connect and clone
            for _ in range(runs):
                started = time.perf_counter()
                done = subprocess.run([str(ORCHESTRA), "run", "fan.dot", "--json"], cwd=project, env=env, check=True,
                                      capture_output=True, text=True)  # fmt: skip
                timings[mode].append(time.perf_counter() - started)
                ran_by[mode] |= _branch_runners(dsn, json.loads(done.stdout)["session_id"])
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()
    local, fleet = statistics.median(timings["local"]), statistics.median(timings["fleet"])
    return {
        "branches": branches, "work_s": work_s, "runs": runs, "local_median_s": round(local, 2),
        "fleet_median_s": round(fleet, 2), "added_per_fan_out_s": round(fleet - local, 2),
        "fleet_branches_ran_on": sorted(ran_by["fleet"]),
    }  # fmt: skip


def _branch_runners(dsn: str, session: str) -> set[str]:
    from orchestra_adapters.dispatch.ledger import PostgresFleetLedger

    ledger = PostgresFleetLedger(dsn)
    try:
        return {entry.worker for entry in ledger.branches(session)}
    finally:
        ledger.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument("--delay", type=float, default=0.2)
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--branches", type=int, default=4)
    parser.add_argument("--branch-runs", type=int, default=3)
    args = parser.parse_args()
    redis, postgres = RedisServer(), PostgresCluster()
    try:
        report: dict[str, object] = {"cpus": os.cpu_count(), "load_before": os.getloadavg()[0]}
        report["dispatch_overhead_ms"] = dispatch_overhead(redis.url, args.tasks)
        runs = []
        with tempfile.TemporaryDirectory() as root:
            for count in (int(n) for n in args.workers.split(",")):
                runs.append(throughput(Path(root), postgres.new_database(), redis.url, count, args.sessions, args.delay))
        one = runs[0]["seconds"]
        for run in runs:
            run["speedup"] = round(one / run["seconds"], 2)
        report["throughput"] = {"model_delay_s": args.delay, "llm_calls_per_session": 3, "runs": runs}
        fan_outs = []
        with tempfile.TemporaryDirectory() as root:
            for work in (0.0, 2.0):
                where = Path(root) / f"work-{work}"
                where.mkdir()
                fan_outs.append(branch_cost(where, postgres.new_database(), redis.url, args.branches, work, args.branch_runs))
        report["fan_out"] = fan_outs
        print(json.dumps(report, indent=2))
    finally:
        redis.stop()
        postgres.stop()


if __name__ == "__main__":
    main()
