"""Speed of `orchestra status` and `orchestra attach` on big sessions; prints one JSON object.

Builds, in a temporary SQLite store, one session of `--turns` turns shaped like a long agent run (per node
visit: start, three agent turns with transcripts, a commit, the end, a checkpoint; tests/support/long_sessions.py) and a few hundred small
sessions, then measures:
- reading and summarizing the big session (`status SESSION`: every turn, transcripts skipped), in process;
- `orchestra status SESSION --json` and `orchestra status` as whole processes;
- one `attach` poll of the big session when nothing is new (what following a run costs per interval);
- whether `orchestra status` imports langchain or langgraph (it must not; exit status 1 if it does).
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

from orchestra_adapters.storage.sqlite_store import SqliteSessionStore  # noqa: E402
from orchestra_core.model import records as r  # noqa: E402
from orchestra_core.ports.session_store import SessionMetadata  # noqa: E402
from orchestra_core.session import api  # noqa: E402
from orchestra_core.session.listing import list_session_rows  # noqa: E402
from orchestra_core.session.summary import session_summary  # noqa: E402
from orchestra_core.session.trace import SessionTrace  # noqa: E402
from tests.support.long_sessions import build_long_session  # noqa: E402

ORCHESTRA = Path(sys.executable).with_name("orchestra")
TRANSCRIPT = ({"role": "user", "content": "Implement the next step of the plan. " * 40},)
RUNS = 3
PROBE = (
    "import sys; sys.argv = ['orchestra', *sys.argv[1:]]\n"
    "from orchestra_cli.main import main\n"
    "try:\n    main()\nfinally:\n"
    "    print(sorted({m.split('.')[0] for m in sys.modules if m.startswith(('langchain', 'langgraph'))}),"
    " file=sys.stderr)\n"
)


def build_small_sessions(store: SqliteSessionStore, count: int) -> None:
    for n in range(count):
        session = store.create_session(SessionMetadata(pipeline=f"p{n % 7}")).session_id
        api.append_record(store, session, r.PipelineLifecycle(r.LifecycleEvent.STARTED, "p"))
        api.append_record(store, session, r.CheckpointRecord("start", ("start",), node_visits=1))
        api.append_record(store, session, r.PipelineLifecycle(r.LifecycleEvent.COMPLETED, "p", duration_s=1.0))


def median_s(action: Callable[[], object], runs: int = RUNS) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def cli_s(project: Path, *args: str) -> float:
    def run() -> None:
        result = subprocess.run([str(ORCHESTRA), *args], cwd=project, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise SystemExit(f"orchestra {' '.join(args)} failed: {result.stderr}")

    return median_s(run)


def heavy_imports(project: Path, *args: str) -> list[str]:
    result = subprocess.run(
        [sys.executable, "-c", PROBE, *args], cwd=project, capture_output=True, text=True, check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    return json.loads(result.stderr.strip().splitlines()[-1].replace("'", '"'))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=20_000, help="turns in the big session")
    parser.add_argument("--sessions", type=int, default=300, help="small sessions in the store")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-status-") as directory:
        project = Path(directory)
        path = project / ".orchestra" / "orchestra.db"
        with SqliteSessionStore(path) as store:
            built = time.perf_counter()
            big = build_long_session(store, options.turns, transcript=TRANSCRIPT)
            build_small_sessions(store, options.sessions)
            build_s = time.perf_counter() - built
        with SqliteSessionStore(path) as store:
            turn_count = store.get_session(big).turn_count
            summary_s = median_s(lambda: session_summary(store, big))
            trace = SessionTrace(store, big)
            trace.read()
            poll_s = median_s(trace.read, runs=20)
            list_s = median_s(lambda: list_session_rows(store, limit=20))
        figures = {
            "big_session_turns": turn_count,
            "small_sessions": options.sessions,
            "store_build_s": round(build_s, 2),
            "summary_in_process_ms": round(summary_s * 1000, 1),
            "summary_us_per_turn": round(summary_s / turn_count * 1e6, 1),
            "attach_idle_poll_ms": round(poll_s * 1000, 3),
            "list_in_process_ms": round(list_s * 1000, 1),
            "cli_status_session_json_s": round(cli_s(project, "status", big, "--json"), 3),
            "cli_status_session_text_s": round(cli_s(project, "status", big), 3),
            "cli_status_list_s": round(cli_s(project, "status"), 3),
            "status_heavy_imports": heavy_imports(project, "status"),
            "load_average": round(os.getloadavg()[0], 2),
        }
    print(json.dumps(figures))
    return 1 if figures["status_heavy_imports"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
