"""Session store speed; prints one JSON object.

Measures, for the embedded SQLite store (WAL, synchronous=NORMAL: durable across process crashes) and for
CxdbSessionStore against the fake CXDB server (run in its own process, on loopback):
- appends per second of 1 KB turns, one transaction each (target for SQLite: at least 5,000/s);
- resume of a session of 100,000 turns: open the store and find its latest checkpoint (decoded), by the
  head's cursor rather than a scan (target: under 100 ms).
`--turns N` shortens the resume session for a quick run. The append rate depends on the machine being
otherwise idle, so the load average and the time spent waiting for a CPU (Linux schedstat) are printed,
with the rate that waiting aside.
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
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from orchestra_adapters.storage.cxdb.store import CxdbSessionStore  # noqa: E402
from orchestra_adapters.storage.sqlite_store import SqliteSessionStore  # noqa: E402
from orchestra_core.model.records import CheckpointRecord  # noqa: E402
from orchestra_core.ports.session_store import SessionMetadata, SessionStore  # noqa: E402
from orchestra_core.session import api  # noqa: E402

APPEND_TARGET_PER_S = 5000
RESUME_TARGET_MS = 100
CHECKPOINT_EVERY = 50
TAIL_AFTER_CHECKPOINT = 7
RESUME_RUNS = 5
TEXT = ("lorem ipsum dolor sit amet " * 40)[:1000]
META = SessionMetadata(pipeline="bench", title="bench")

_SERVER = (
    "import sys, time; sys.path.insert(0, sys.argv[1]);"
    "from tests.support.cxdb_server import FakeCxdbServer;"
    "server = FakeCxdbServer(); print(server.addr, server.url, flush=True); time.sleep(86400)"
)


def measure_appends(store: SessionStore, count: int) -> dict[str, float]:
    """Append `count` 1 KB turns to a new session, one durable transaction each."""
    session = store.create_session(META).session_id
    latencies = []
    cpu = time.process_time()
    waited = _runqueue_wait_s()
    started = time.perf_counter()
    for n in range(count):
        before = time.perf_counter()
        store.append(session, "bench.Event", 1, {1: n, 2: TEXT})
        latencies.append(time.perf_counter() - before)
    elapsed = time.perf_counter() - started
    waited = _runqueue_wait_s() - waited
    latencies.sort()
    return {
        "appends": count,
        "appends_per_s": round(count / elapsed),
        "p50_us": round(latencies[len(latencies) // 2] * 1e6),
        "p99_us": round(latencies[int(len(latencies) * 0.99)] * 1e6),
        "cpu_us_per_append": round((time.process_time() - cpu) / count * 1e6),
        "runqueue_wait_s": round(waited, 2),
        "appends_per_s_without_runqueue_wait": round(count / max(elapsed - waited, 1e-9)),
    }


def _runqueue_wait_s() -> float:
    """Seconds this process spent runnable but waiting for a CPU (Linux; 0 elsewhere)."""
    try:
        return int(Path("/proc/self/schedstat").read_text().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


def build_session(store: SessionStore, turns: int) -> tuple[str, str]:
    """A session of `turns` turns with a checkpoint every CHECKPOINT_EVERY and a few turns after the last."""
    session = store.create_session(META).session_id
    last_checkpoint = ""
    for n in range(1, turns + 1):
        if n % CHECKPOINT_EVERY == 0 and n <= turns - TAIL_AFTER_CHECKPOINT:
            record = CheckpointRecord(f"node{n}", (f"node{n}",), {"n": n, "goal": "bench"})
            last_checkpoint = api.append_record(store, session, record).turn_id
        else:
            store.append(session, "bench.Event", 1, {1: n, 2: TEXT})
    return session, last_checkpoint


def measure_resume(open_store: Callable[[], SessionStore], session: str, expected: str) -> dict[str, float]:
    """Open a fresh store and find the session's latest checkpoint; median and worst of RESUME_RUNS."""
    timings = []
    for _ in range(RESUME_RUNS):
        started = time.perf_counter()
        store = open_store()
        found = api.latest_checkpoint(store, session)
        timings.append((time.perf_counter() - started) * 1000)
        store.close()
        if found is None or found.turn.turn_id != expected:
            raise SystemExit(f"resume found {found and found.turn.turn_id}, expected {expected}")
    return {"resume_ms_median": round(statistics.median(timings), 2), "resume_ms_max": round(max(timings), 2)}


def bench_backend(open_store: Callable[[], SessionStore], appends: int, turns: int) -> dict[str, object]:
    store = open_store()
    try:
        result: dict[str, object] = measure_appends(store, appends)
        session, checkpoint = build_session(store, turns)
    finally:
        store.close()
    result.update({"resume_turns": turns, **measure_resume(open_store, session, checkpoint)})
    result["meets_targets"] = (
        result["appends_per_s"] >= APPEND_TARGET_PER_S and result["resume_ms_median"] < RESUME_TARGET_MS
    )
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=100_000)
    parser.add_argument("--appends", type=int, default=20_000)
    arguments = parser.parse_args()
    results: dict[str, object] = {
        "targets": {"sqlite_appends_per_s": APPEND_TARGET_PER_S, "resume_ms": RESUME_TARGET_MS},
        "load_average_1m": round(os.getloadavg()[0], 2),
    }
    with tempfile.TemporaryDirectory() as workdir:
        path = Path(workdir) / ".orchestra" / "orchestra.db"
        results["sqlite"] = bench_backend(lambda: SqliteSessionStore(path), arguments.appends, arguments.turns)
        results["sqlite"]["file_mb"] = round(path.stat().st_size / 1e6, 1)  # type: ignore[index]
    server = subprocess.Popen([sys.executable, "-c", _SERVER, str(ROOT)], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        addr, url = server.stdout.readline().split()
        cxdb = bench_backend(lambda: CxdbSessionStore(addr, url), arguments.appends // 4, arguments.turns)
        cxdb["meets_targets"] = cxdb["resume_ms_median"] < RESUME_TARGET_MS  # no append-rate target for CXDB
        results["cxdb_fake_server"] = cxdb
    finally:
        server.kill()
        server.wait()
    print(json.dumps(results))


if __name__ == "__main__":
    main()
