"""Engine speed: whole-process `orchestra run --backend simulate` of linear pipelines, and per-node overhead.

Prints one JSON object. Targets (issue 3): 200 nodes under 0.25 s and 2,000 nodes under 1.5 s for the whole
process with checkpoints on; engine overhead under 0.2 ms per node with checkpoint writing excluded.
Process timings are the best of several runs (the machine may be busy); `median_*` are given too.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ORCHESTRA = Path(sys.executable).with_name("orchestra")
REPEATS = {200: 7, 2000: 3}


def linear_dot(count: int) -> str:
    nodes = "\n".join(f'    n{i} [prompt="Step {i} of $goal"]' for i in range(count))
    chain = " -> ".join(["start", *(f"n{i}" for i in range(count)), "done"])
    return f'digraph bench {{\n    graph [goal="benchmark"]\n    start [shape=Mdiamond]\n    done [shape=Msquare]\n{nodes}\n    {chain}\n}}\n'


def whole_process(pipeline: Path, work: Path, repeats: int, *extra: str) -> list[float]:
    timings = []
    for attempt in range(repeats):
        logs = work / f"logs-{pipeline.stem}-{attempt}-{len(extra)}"
        started = time.perf_counter()
        done = subprocess.run(
            [str(ORCHESTRA), "run", str(pipeline), "--backend", "simulate", "--logs-root", str(logs), *extra],
            capture_output=True,
            cwd=work,
            check=False,
        )
        timings.append(time.perf_counter() - started)
        if done.returncode != 0:
            raise SystemExit(f"orchestra run failed: {done.stderr.decode()}")
        if not (logs / "checkpoint.json").is_file():
            raise SystemExit("no checkpoint was written")
        shutil.rmtree(logs)
    return timings


def startup(repeats: int = 5) -> float:
    """Best time of `orchestra run --help`: interpreter and command-line start-up, no pipeline."""
    timings = []
    for _ in range(repeats):
        started = time.perf_counter()
        subprocess.run([str(ORCHESTRA), "run", "--help"], stdout=subprocess.DEVNULL, check=True)
        timings.append(time.perf_counter() - started)
    return min(timings)


class _NoCheckpointWrites:
    """Opens in-memory run directories whose checkpoint saving does nothing."""

    def open(self, root: str):  # type: ignore[no-untyped-def]
        from orchestra_core.testing.run_directory import InMemoryRunDirectory

        directory = InMemoryRunDirectory(root)
        directory.save_checkpoint = lambda checkpoint: None  # type: ignore[method-assign]
        return directory


def engine_overhead_us(count: int, repeats: int = 5) -> float:
    """Microseconds per node of the engine itself: simulation handlers, in-memory stage files,
    checkpoints built but not written, no observers."""
    from orchestra_core.engine.runner import PipelineEngine
    from orchestra_core.graph import parse_dot
    from orchestra_core.handlers import build_registry
    from orchestra_core.ports.clock import SystemClock

    graph = parse_dot(linear_dot(count))
    engine = PipelineEngine(build_registry(), run_directory=_NoCheckpointWrites(), clock=SystemClock())
    best = float("inf")
    for attempt in range(repeats):
        started = time.perf_counter()
        engine.run(graph, session_id=f"bench-{attempt}", logs_root=f"/bench/{attempt}")
        best = min(best, time.perf_counter() - started)
    return best / (count + 2) * 1e6


def checkpoint_write_us(count: int) -> float:
    """Microseconds per checkpoint written to disk during a run of `count` nodes (the run directory's
    save_checkpoint, incremental encoding and atomic replace included)."""
    from orchestra_adapters.filesystem.run_directory import FileRunDirectory
    from orchestra_core.model.checkpoint import Checkpoint, OutcomeMap
    from orchestra_core.model.outcome import Outcome

    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMPDIR")) as root:
        directory = FileRunDirectory(root)
        outcomes, completed = OutcomeMap(), []
        checkpoints = []
        for index in range(count):
            node = f"n{index}"
            outcomes = outcomes.with_outcome(node, Outcome.success(f"Stage completed: {node}"))
            completed.append(node)
            checkpoints.append(
                Checkpoint(node, tuple(completed), outcomes, {}, {"last_stage": node, "graph.goal": "benchmark"},
                           datetime.now(UTC), next_node=f"n{index + 1}")
            )
        started = time.perf_counter()
        for checkpoint in checkpoints:
            directory.save_checkpoint(checkpoint)
        elapsed = time.perf_counter() - started
        directory.close()  # its writer thread may still be writing the last checkpoint into `root`
        return elapsed / count * 1e6


def recording_us(count: int) -> float:
    """Microseconds per node that recording the run into a SQLite session store adds (three turns per
    node: stage started, stage completed, checkpoint), measured in process against an unrecorded run."""
    from orchestra_adapters.storage.sqlite_store import SqliteSessionStore
    from orchestra_core.engine.runner import PipelineEngine
    from orchestra_core.graph import parse_dot
    from orchestra_core.handlers import build_registry
    from orchestra_core.ports.clock import SystemClock
    from orchestra_core.ports.session_store import SessionMetadata
    from orchestra_core.session.api import publish_types
    from orchestra_core.session.recorder import SessionRecorder

    graph = parse_dot(linear_dot(count))
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMPDIR")) as root:
        store = SqliteSessionStore(Path(root) / "orchestra.db")
        publish_types(store)

        def timed(recorded: bool) -> float:
            sid = store.create_session(SessionMetadata(pipeline="bench")).session_id
            recorder = SessionRecorder(store, sid, pipeline_name="bench")
            engine = PipelineEngine(
                build_registry(), run_directory=_NoCheckpointWrites(), clock=SystemClock(),
                observers=[recorder] if recorded else [], checkpoint_sinks=[recorder] if recorded else [],
            )
            started = time.perf_counter()
            engine.run(graph, session_id=sid, logs_root=f"/bench/{sid}")
            return time.perf_counter() - started

        difference = min(timed(True) for _ in range(3)) - min(timed(False) for _ in range(3))
        store.close()
    return difference / (count + 2) * 1e6


def _process_timings(results: dict[str, object], work: Path, suffix: str = "") -> None:
    for count, repeats in REPEATS.items():
        pipeline = work / f"linear_{count}.dot"
        pipeline.write_text(linear_dot(count), encoding="utf-8")
        plain = whole_process(pipeline, work, repeats)
        quiet = whole_process(pipeline, work, repeats, "--quiet")
        results[f"run_{count}_nodes{suffix}_s"] = round(min(plain), 3)
        results[f"median_run_{count}_nodes{suffix}_s"] = round(statistics.median(plain), 3)
        results[f"run_{count}_nodes_quiet{suffix}_s"] = round(min(quiet), 3)


def main() -> None:
    results: dict[str, object] = {"bench": "engine"}
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMPDIR")) as temporary:
        _process_timings(results, Path(temporary))
        results["startup_run_help_s"] = round(startup(), 3)
    if Path("/dev/shm").is_dir():  # the same runs with the run directory and store in memory: no disk latency
        with tempfile.TemporaryDirectory(dir="/dev/shm") as temporary:
            _process_timings(results, Path(temporary), "_tmpfs")
    results["store_recording_us_per_node_2000"] = round(recording_us(2000), 1)
    results["engine_overhead_us_per_node_200"] = round(engine_overhead_us(200), 1)
    results["engine_overhead_us_per_node_2000"] = round(engine_overhead_us(2000, repeats=3), 1)
    results["checkpoint_write_us_per_node_2000"] = round(checkpoint_write_us(2000), 1)
    results["targets"] = {"run_200_nodes_s": 0.25, "run_2000_nodes_s": 1.5, "engine_overhead_us_per_node": 200}
    print(json.dumps(results))


if __name__ == "__main__":
    main()
