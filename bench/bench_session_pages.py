"""Pages of a 100,000-turn session: `orchestra status ID --json --limit 50 [--after TURN]`, the server's session
page and the first event of its SSE stream, each beside its floor and target; prints one JSON object.

The session is built in a temporary SQLite store through the store's API, a node visit per `append_batch` (start,
three agent turns, a commit, the end, a checkpoint with the workspace's heads). The floor is the project's Python
starting and importing what `status` needs (`typer, attrs, cattrs, dependency_injector.providers, sqlite3`),
measured in the same run; the target of a page is its floor + 0.1 s (issue 33). The server figures are in
process (a Starlette test client): the page's JSON and the first SSE frame after `Last-Event-ID`, against the
same read of a 1,000-turn session (target: at most 2x, i.e. they do not grow with the session's length).
Exit status 1 when a target is missed.
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
from tests.support.long_sessions import build_long_session  # noqa: E402

ORCHESTRA = Path(sys.executable).with_name("orchestra")
FLOOR_IMPORTS = "import typer, attrs, cattrs, dependency_injector.providers, sqlite3"
RUNS = 5
PAGE = 50


def median_s(action: Callable[[], object], runs: int = RUNS) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def cli_s(project: Path, *args: str) -> float:
    def run() -> None:
        result = subprocess.run(
            [str(ORCHESTRA), *args], cwd=project, capture_output=True, text=True, check=False
        )
        if result.returncode != 0:
            raise SystemExit(f"orchestra {' '.join(args)} failed: {result.stderr}")

    return median_s(run)


def floor_s(project: Path) -> float:
    return median_s(lambda: subprocess.run([sys.executable, "-c", FLOOR_IMPORTS], cwd=project, check=True))


def server_figures(path: Path, session: str, after: str) -> dict[str, float]:
    """The session page's JSON and the first SSE frame after `after`, in process."""
    from starlette.testclient import TestClient

    from orchestra_adapters.server.app import create_app
    from orchestra_adapters.server.service import PipelineService

    service = PipelineService(cwd=path.parent.parent)
    with TestClient(create_app(service)) as client:

        def page() -> None:
            response = client.get(f"/sessions/{session}", params={"limit": PAGE})
            assert response.status_code == 200, response.text

        def first_event() -> None:
            with client.stream(
                "GET", f"/pipelines/{session}/events", headers={"Last-Event-ID": after}
            ) as response:
                for line in response.iter_lines():
                    if line.startswith("data:"):
                        return

        return {"page_s": median_s(page), "first_event_s": median_s(first_event)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=100_000, help="turns in the long session")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-pages-") as directory:
        project = Path(directory)
        path = project / ".orchestra" / "orchestra.db"
        with SqliteSessionStore(path) as store:
            built = time.perf_counter()
            long = build_long_session(store, options.turns)
            short = build_long_session(store, 1_000)
            build_s = time.perf_counter() - built
            turn_count = store.get_session(long).turn_count
            middle = store.turns(long, limit=1, before_turn_id=None).turns[0]
            middle_id = str(int(middle.turn_id) - turn_count // 2)
            short_middle = str(int(store.get_session(short).head_turn_id or 0) - 500)
        floor = floor_s(project)
        first_page = cli_s(project, "status", long, "--json", "--limit", str(PAGE))
        after_page = cli_s(project, "status", long, "--json", "--limit", str(PAGE), "--after", middle_id)
        long_server = server_figures(path, long, middle_id)
        short_server = server_figures(path, short, short_middle)
    target = floor + 0.1
    figures = {
        "session_turns": turn_count,
        "store_build_s": round(build_s, 2),
        "floor_s": round(floor, 3),
        "target_s": round(target, 3),
        "status_json_limit_s": round(first_page, 3),
        "status_json_after_s": round(after_page, 3),
        "server_page_ms": round(long_server["page_s"] * 1000, 1),
        "server_page_1000_turns_ms": round(short_server["page_s"] * 1000, 1),
        "sse_first_event_ms": round(long_server["first_event_s"] * 1000, 1),
        "sse_first_event_1000_turns_ms": round(short_server["first_event_s"] * 1000, 1),
        "load_average": round(os.getloadavg()[0], 2),
    }
    missed = [
        first_page > target, after_page > target,
        long_server["page_s"] > 2 * short_server["page_s"] + 0.01,
        long_server["first_event_s"] > 2 * short_server["first_event_s"] + 0.01,
    ]  # fmt: skip
    figures["targets_met"] = not any(missed)
    print(json.dumps(figures))
    return 1 if any(missed) else 0


if __name__ == "__main__":
    raise SystemExit(main())
