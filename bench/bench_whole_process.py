"""Whole-process speed as a new user meets it (issue 16); prints one JSON object, exits 0 even on a miss.

Every figure is the median of whole `orchestra` processes, bytecode cached (PYTHONDONTWRITEBYTECODE unset,
one warm-up run first), a fresh `--logs-root` on the disk each run, the SQLite store and the run directory
both written:
- `orchestra --help`; `orchestra compile` of a 2,000-node linear pipeline;
- `orchestra run --backend simulate` of 5, 200 and 2,000-node linear pipelines;
- the README quick start's run (git workspace, LangGraph agent on the cassette, per-turn commits);
- `orchestra status SESSION` of a session of `--status-turns` turns, text (the target) and `--json`;
- peak memory (RSS) of the 2,000-node run;
- the cost per node of the first and the last 100 nodes of a `--flat-nodes` run (10,000 nodes, the issue's
  figure: a cost per node that grows with the run shows only on long runs), from the times the store recorded
  their checkpoints;
- the same linear pipelines run by py-attractor (PyPI), installed into `bench/.venv-peer`, in alternating
  runs, reported as Orchestra / py-attractor ratios (skipped with a message when it cannot be installed).
`library_floor_s` is the time to import only the libraries every command is built on (no Orchestra code):
the floor under the start-up figures. `missed` lists the targets not met. `python_startup_s` (a bare `python -c pass`) and `load_average` tell how
busy the machine was: on a loaded machine the ratios, taken from alternating runs, are the steadier figures.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

ORCHESTRA = Path(sys.executable).with_name("orchestra")
PEER_VENV = ROOT / "bench" / ".venv-peer"
PEER_PACKAGE = "py-attractor"
SIZES = (5, 200, 2000)
LIBRARY_FLOOR = "import typer, attrs, filelock, sqlite3, msgpack; import orchestra_adapters.dependency_injection"
ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}

# (figure, limit, what): a figure above its limit is a missed target.
TARGETS = (
    ("help_s", 0.1, "orchestra --help"),
    ("compile_2000_s", 0.6, "compile of 2,000 nodes"),
    ("run_200_s", 0.25, "run of 200 nodes"),
    ("run_2000_s", 1.5, "run of 2,000 nodes"),
    ("quickstart_run_s", 1.0, "the quick start's run"),
    ("status_big_session_s", 0.3, "status of the big session"),
    ("run_2000_peak_rss_mb", 40.0, "peak memory of the 2,000-node run"),
    ("last_vs_first_100_nodes", 1.2, "last 100 nodes cost what the first 100 cost"),
    ("peer_ratio_5", 2.0, "at most 2x py-attractor at 5 nodes"),
    ("peer_ratio_200", 1.5, "at most 1.5x py-attractor at 200 nodes"),
    ("peer_ratio_2000", 1.0, "faster than py-attractor at 2,000 nodes"),
)


def linear_dot(count: int) -> str:
    """A linear pipeline start -> n0 -> ... -> n{count-1} -> done of codergen nodes."""
    nodes = "\n".join(f'    n{i} [prompt="Step {i} of $goal"]' for i in range(count))
    chain = " -> ".join(["start", *(f"n{i}" for i in range(count)), "done"])
    return (
        f'digraph bench {{\n    graph [goal="benchmark"]\n    start [shape=Mdiamond]\n    done [shape=Msquare]\n'
        f"{nodes}\n    {chain}\n}}\n"
    )


def timed(command: Sequence[str], cwd: Path) -> float:
    """Seconds of one whole process; a failing command stops the bench with its stderr."""
    started = time.perf_counter()
    done = subprocess.run(list(command), cwd=cwd, env=ENV, capture_output=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}): {done.stderr.decode()[-2000:]}")
    return elapsed


def median_of(runs: int, one: Callable[[int], float]) -> float:
    """Median of `runs` calls after one warm-up call (which fills the bytecode cache)."""
    one(-1)
    return statistics.median(one(attempt) for attempt in range(runs))


def orchestra_run(work: Path, size: int, attempt: int) -> float:
    logs = work / f"logs-{size}-{attempt}"
    shutil.rmtree(logs, ignore_errors=True)
    elapsed = timed(
        [str(ORCHESTRA), "run", f"p{size}.dot", "--backend", "simulate", "--logs-root", str(logs)], work
    )
    if not (logs / "checkpoint.json").is_file() or not (work / ".orchestra" / "orchestra.db").is_file():
        raise SystemExit("the run wrote no checkpoint.json or no SQLite store")
    shutil.rmtree(logs)
    return elapsed


def peak_rss_mb(work: Path, size: int) -> float:
    """Peak resident memory of one whole `orchestra run` process, in MB."""
    logs = work / f"logs-rss-{size}"
    process = subprocess.Popen(
        [str(ORCHESTRA), "run", f"p{size}.dot", "--backend", "simulate", "--logs-root", str(logs)],
        cwd=work,
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    shutil.rmtree(logs, ignore_errors=True)
    return usage.ru_maxrss / 1024  # kilobytes on Linux


def per_node_costs(work: Path, size: int) -> dict[str, float]:
    """Milliseconds per node of the first and the last 100 nodes, from when the store recorded each node's
    checkpoint (the run's durable record, written before the next node starts; the stage files are written
    by a background writer, so their times say when the writer got to them, not when the node ended)."""
    (work / f"p{size}.dot").write_text(linear_dot(size))
    logs = work / f"logs-flat-{size}"
    command = [str(ORCHESTRA), "run", f"p{size}.dot", "--backend", "simulate", "--logs-root", str(logs)]
    total = timed([*command, "--max-visits", str(size + 10)], work)  # the default limit is 10,000 visits
    ended = checkpoint_times_ms(work / ".orchestra" / "orchestra.db")[1:]  # the start node's first
    window = min(100, size // 2)
    first = (ended[window] - ended[0]) / window
    last = (ended[size - 1] - ended[size - 1 - window]) / window
    shutil.rmtree(logs)
    return {
        "flat_nodes": size,
        "flat_run_s": round(total, 2),
        "first_100_ms_per_node": round(first, 3),
        "last_100_ms_per_node": round(last, 3),
        "last_vs_first_100_nodes": round(last / first, 2) if first > 0 else None,
    }


def checkpoint_times_ms(store: Path) -> list[int]:
    """When each checkpoint of the store's newest session was recorded (ms since the epoch), oldest first."""
    import sqlite3

    from orchestra_core.session.catalog import CHECKPOINT

    connection = sqlite3.connect(store)
    try:
        (session,) = connection.execute("SELECT max(id) FROM sessions").fetchone()
        rows = connection.execute(
            "SELECT created_at_ms FROM turns WHERE session_id = ? AND type_id = ? ORDER BY id",
            (session, CHECKPOINT.type_id),
        ).fetchall()
    finally:
        connection.close()
    return [row[0] for row in rows]


def quickstart_run_s(base: Path, runs: int) -> float:
    """The README quick start: a fresh copy and git repository per run (not timed), then `orchestra run`."""
    from tests.support.git_repos import IDENTITY, git

    def one(attempt: int) -> float:
        project = base / f"quickstart-{attempt}"
        shutil.copytree(ROOT / "examples" / "quickstart", project)
        git(project, "init", "-q", "-b", "main")
        git(project, "add", "-A")
        git(project, "commit", "-q", "-m", "Start")
        started = time.perf_counter()
        done = subprocess.run(
            [str(ORCHESTRA), "run", "pipeline.dot"], cwd=project, env={**ENV, **IDENTITY}, capture_output=True
        )
        elapsed = time.perf_counter() - started
        if done.returncode != 0:
            raise SystemExit(f"quick start run failed: {done.stderr.decode()[-2000:]}")
        shutil.rmtree(project)
        return elapsed

    return median_of(runs, one)


def status_big_session(base: Path, turns: int, runs: int) -> dict[str, float | int]:
    """`orchestra status SESSION`, text and `--json`, of one session of about `turns` turns (built through the
    store API)."""
    from bench_session_commands import build_big_session

    from orchestra_adapters.storage.sqlite_store import SqliteSessionStore

    project = base / "status"
    with SqliteSessionStore(project / ".orchestra" / "orchestra.db") as store:
        # Its node visits make 6 turns each, for every 7 of its `turns` argument: ask for enough of them.
        session = build_big_session(store, -(-turns * 7 // 6))
        count = store.get_session(session).turn_count
    command = [str(ORCHESTRA), "status", session]
    return {
        "status_session_turns": count,
        "status_big_session_s": round(median_of(runs, lambda _: timed(command, project)), 3),
        "status_big_session_json_s": round(median_of(runs, lambda _: timed([*command, "--json"], project)), 3),
    }


def peer_python(skip: bool) -> tuple[Path | None, str | None]:
    """The bench venv's python with py-attractor installed, or None and why not."""
    if skip:
        return None, "skipped (--no-peer)"
    python = PEER_VENV / "bin" / "python"
    if not (PEER_VENV / "bin" / "py-attractor").is_file():
        try:
            subprocess.run([sys.executable, "-m", "venv", str(PEER_VENV)], check=True, capture_output=True)
            subprocess.run(
                [str(python), "-m", "pip", "install", "--quiet", PEER_PACKAGE],
                check=True,
                capture_output=True,
            )
        except (subprocess.CalledProcessError, OSError) as error:
            detail = getattr(error, "stderr", b"") or b""
            return None, f"{PEER_PACKAGE} could not be installed: {error} {detail.decode()[-300:]}".strip()
    return python, None


def peer_run(python: Path, work: Path, size: int, attempt: int) -> float:
    """py-attractor's own CLI: without an LLM backend its codergen nodes simulate (its offline mode)."""
    logs = work / f"peer-logs-{size}-{attempt}"
    shutil.rmtree(logs, ignore_errors=True)
    elapsed = timed([str(python.with_name("py-attractor")), f"p{size}.dot", "--logs-root", str(logs)], work)
    if not (logs / "checkpoint.json").is_file():
        raise SystemExit("py-attractor wrote no checkpoint.json")
    shutil.rmtree(logs)
    return elapsed


def side_by_side(python: Path, work: Path, runs: int) -> dict[str, float]:
    """Alternating Orchestra and py-attractor runs of each size; medians and their ratio."""
    figures: dict[str, float] = {}
    for size in SIZES:
        ours, theirs = [], []
        orchestra_run(work, size, -1)
        peer_run(python, work, size, -1)
        for attempt in range(runs if size < 2000 else max(3, runs // 2)):
            ours.append(orchestra_run(work, size, attempt))
            theirs.append(peer_run(python, work, size, attempt))
        figures[f"peer_orchestra_{size}_s"] = round(statistics.median(ours), 3)
        figures[f"peer_py_attractor_{size}_s"] = round(statistics.median(theirs), 3)
        figures[f"peer_ratio_{size}"] = round(statistics.median(ours) / statistics.median(theirs), 2)
    return figures


def missed(figures: dict[str, object]) -> list[str]:
    out = []
    for key, limit, what in TARGETS:
        value = figures.get(key)
        if isinstance(value, int | float) and value > limit:
            out.append(f"{what}: {key} {value} > {limit}")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="timed runs per figure (the median is reported)")
    parser.add_argument(
        "--status-turns", type=int, default=100_000, help="turns of the big session for status"
    )
    parser.add_argument(
        "--flat-nodes", type=int, default=10_000, help="nodes of the per-node cost run"
    )
    parser.add_argument("--no-peer", action="store_true", help="skip the py-attractor comparison")
    options = parser.parse_args()
    base = ROOT / ".bench-tmp"
    base.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="whole-process-", dir=base) as directory:
        work = Path(directory)
        subprocess.run(["git", "init", "-q", "-b", "main"], cwd=work, check=True)
        for size in SIZES:
            (work / f"p{size}.dot").write_text(linear_dot(size))
        runs = options.runs
        figures: dict[str, object] = {
            "python_startup_s": median_of(runs, lambda _: timed([sys.executable, "-c", "pass"], work)),
            # The floor under every command: importing only the libraries the CLI and its composition root are
            # built on (Typer, dependency-injector with asyncio, attrs, filelock, SQLite, msgpack).
            "library_floor_s": median_of(runs, lambda _: timed([sys.executable, "-c", LIBRARY_FLOOR], work)),
            "help_s": median_of(runs, lambda _: timed([str(ORCHESTRA), "--help"], work)),
            "compile_2000_s": median_of(
                runs, lambda _: timed([str(ORCHESTRA), "compile", "p2000.dot"], work)
            ),
        }
        for size in SIZES:
            figures[f"run_{size}_s"] = median_of(
                runs if size < 2000 else max(3, runs // 2),
                lambda attempt, size=size: orchestra_run(work, size, attempt),
            )
        figures["run_2000_peak_rss_mb"] = peak_rss_mb(work, 2000)
        figures["quickstart_run_s"] = quickstart_run_s(work, max(3, runs // 2))
        figures.update(status_big_session(work, options.status_turns, max(3, runs // 2)))
        figures.update(per_node_costs(work, options.flat_nodes))
        python, why_not = peer_python(options.no_peer)
        if python is None:
            print(f"py-attractor comparison {why_not}", file=sys.stderr)
            figures["peer"] = why_not
        else:
            figures.update(side_by_side(python, work, runs))
            floor, peer = figures["library_floor_s"], figures["peer_py_attractor_5_s"]
            if isinstance(floor, float) and isinstance(peer, float) and peer > 0:
                figures["library_floor_vs_py_attractor_5"] = round(floor / peer, 2)
    figures = {key: round(value, 3) if isinstance(value, float) else value for key, value in figures.items()}
    figures["load_average"] = round(os.getloadavg()[0], 2)
    figures["missed"] = missed(figures)
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
