"""Pages of a 100,000-turn session: `orchestra status ID --json --limit 50 [--after TURN]`, the server's session
page and the first event of its SSE stream, each beside its floor and target; prints one JSON object.

The session is built in a temporary SQLite store through the store's API, 200 node visits per `append_batch`
(start, three agent turns, a commit, the end, a checkpoint with the workspace's heads). The floor is the project's
Python starting and importing what `status` needs (`FLOOR_IMPORTS`), run in turn with the pages so both see the
same machine; the target of a page is its floor + 0.1 s (issue 33); the page of a 1,000-turn session is shown
beside it. The whole `--json` document (all there was before pages) is timed once. The server figures are in
process (a Starlette test client): the web view's first request, a forward page, and the first SSE frame after
`Last-Event-ID` and from the start, against the same on a 1,000-turn session (target: at most 2x, i.e. they do not
grow with the session's length).
`targets_missed` names the targets this run missed.
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
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from orchestra_adapters.storage.sqlite_store import SqliteSessionStore  # noqa: E402
from tests.support.long_sessions import build_long_session  # noqa: E402

ORCHESTRA = Path(sys.executable).with_name("orchestra")
# What `status` truly needs: the CLI, the models, the container's providers, the store and its payload codecs, the
# runners' locks (dependency_injector.containers' wiring pulls in starlette and pydantic: not needed, not counted).
FLOOR_IMPORTS = "import typer, attrs, dependency_injector.providers, sqlite3, msgpack, zstandard, blake3, filelock"
RUNS = 5
PAGE = 50


def median_s(action: Callable[[], object], runs: int = RUNS) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def cli_s(project: Path, *args: str, runs: int = RUNS) -> float:
    def run() -> None:
        result = subprocess.run(
            [str(ORCHESTRA), *args], cwd=project, capture_output=True, text=True, check=False
        )
        if result.returncode != 0:
            raise SystemExit(f"orchestra {' '.join(args)} failed: {result.stderr}")

    return median_s(run, runs)


def side_by_side(project: Path, *commands: list[str], runs: int = 7) -> list[float]:
    """Each command's median time, the commands run in turn `runs` times (so a busy machine slows them alike)."""
    times: list[list[float]] = [[] for _ in commands]
    for _ in range(runs):
        for index, command in enumerate(commands):
            started = time.perf_counter()
            result = subprocess.run(command, cwd=project, capture_output=True, text=True, check=False)
            times[index].append(time.perf_counter() - started)
            if result.returncode != 0:
                raise SystemExit(f"{' '.join(command)} failed: {result.stderr}")
    return [statistics.median(each) for each in times]


def server_figures(path: Path, sessions: dict[str, tuple[str, str]]) -> dict[str, dict[str, float]]:
    """For each session (name: id, a turn in its middle), in process and in turn: the web view's first request
    (`?last=50`), a forward page after the middle turn, and the first SSE frame after it and from the start."""
    from starlette.testclient import TestClient

    from orchestra_adapters.server.app import create_app
    from orchestra_adapters.server.service import PipelineService

    service = PipelineService(cwd=path.parent.parent)
    times: dict[str, dict[str, list[float]]] = {name: {} for name in sessions}
    with TestClient(create_app(service), base_url="http://127.0.0.1") as client:

        def page(session: str, params: dict[str, Any]) -> None:
            response = client.get(f"/sessions/{session}", params=params)
            assert response.status_code == 200, response.text

        def first_event(session: str, headers: dict[str, str]) -> None:
            with client.stream("GET", f"/pipelines/{session}/events", headers=headers) as response:
                for line in response.iter_lines():
                    if line.startswith("data:"):
                        return

        try:
            for _ in range(RUNS + 1):  # the first round warms up (imports on first use), the others count
                for name, (session, middle) in sessions.items():
                    reads: dict[str, tuple[Callable[..., None], dict[str, Any]]] = {
                        "latest": (page, {"last": PAGE}),
                        "after": (page, {"limit": PAGE, "after": middle}),
                        "first_event": (first_event, {"Last-Event-ID": middle}),
                        "first_event_from_start": (first_event, {}),
                    }
                    for key, (read, argument) in reads.items():
                        started = time.perf_counter()
                        read(session, argument)
                        times[name].setdefault(key, []).append(time.perf_counter() - started)
        finally:
            service.close()
    return {name: {key: statistics.median(each[1:]) for key, each in kinds.items()} for name, kinds in times.items()}


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
        floor, first_page, after_page, short_page = side_by_side(
            project,
            [sys.executable, "-c", FLOOR_IMPORTS],
            [str(ORCHESTRA), "status", long, "--json", "--limit", str(PAGE)],
            [str(ORCHESTRA), "status", long, "--json", "--limit", str(PAGE), "--after", middle_id],
            [str(ORCHESTRA), "status", short, "--json", "--limit", str(PAGE), "--after", short_middle],
        )
        server = server_figures(path, {"long": (long, middle_id), "short": (short, short_middle)})
        long_server, short_server = server["long"], server["short"]
        whole = cli_s(project, "status", long, "--json", runs=1)  # the whole document, as before paging
    target = floor + 0.1
    figures: dict[str, Any] = {
        "session_turns": turn_count,
        "store_build_s": round(build_s, 2),
        "floor_s": round(floor, 3),
        "target_s": round(target, 3),
        "status_json_limit_s": round(first_page, 3),
        "status_json_after_s": round(after_page, 3),
        "status_json_after_1000_turns_s": round(short_page, 3),
        "status_json_whole_session_s": round(whole, 3),
        **{f"server_{key}_ms": round(value * 1000, 1) for key, value in long_server.items()},
        **{f"server_{key}_1000_turns_ms": round(value * 1000, 1) for key, value in short_server.items()},
        "load_average": round(os.getloadavg()[0], 2),
    }
    checks = {
        "status_json_limit": first_page <= target,
        "status_json_after": after_page <= target,
        **{f"server_{key}_flat": long_server[key] <= 2 * short_server[key] + 0.01 for key in long_server},
    }
    figures["targets_missed"] = [name for name, met in checks.items() if not met]
    print(json.dumps(figures))
    return 0  # timings vary too much on a shared machine to fail on; the tests guard the work a page does


if __name__ == "__main__":
    raise SystemExit(main())
