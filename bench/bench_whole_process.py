"""Whole-process speed as a new user meets it (issue 16); prints one JSON object, exits 0 even on a miss.

Every figure is the median of whole `orchestra` processes, bytecode cached (PYTHONDONTWRITEBYTECODE unset,
one warm-up run first), a fresh `--logs-root` on the disk each run, the SQLite store and the run directory
both written:
- `orchestra --help`; `orchestra compile` of a 2,000-node linear pipeline;
- `orchestra run --backend simulate` of 5, 200 and 2,000-node linear pipelines;
- the README quick start's run (git workspace, LangGraph agent on the cassette, per-turn commits);
- `orchestra status SESSION` of a session of `--status-turns` turns, text (the target) and `--json`;
- peak memory (RSS) of the 5-node and the 2,000-node runs;
- how many modules `--help`, that compile and the 5-node run import;
- the cost per node of the first and the last 100 nodes of a `--flat-nodes` run (10,000 nodes, the issue's
  figure: a cost per node that grows with the run shows only on long runs), from the times the store recorded
  their checkpoints;
- the same linear pipelines run by py-attractor (PyPI), installed into `bench/.venv-peer`, in alternating
  runs, reported as Orchestra / py-attractor ratios (skipped with a message when it cannot be installed).
The start-up figures stand beside their floors (issue 33), each measured in the same run, alternating with the
commands it is the floor of: a floor is this Python starting and importing only the libraries the command truly
needs, no Orchestra code (`help_floor_s`: typer; `run_floor_s`: typer, attrs, cattrs, dependency-injector's
providers, pygraphviz, sqlite3, filelock, for `run` and `compile`; `quickstart_floor_s`: those, LangChain's core
and LangGraph's graph). `targets` lists every target with its figure, its floor, its limit and whether it is
met; `missed` lists the targets not met. `python_startup_s` (a bare `python -c pass`) and `load_average` tell how
busy the machine was: on a loaded machine the figures taken from alternating runs are the steadier ones.
`<figure>_cpu_s` is the CPU time of the same processes (user and system, median): on a loaded machine the
time a process takes grows with the load and its CPU time does not, so `targets` gives the comparison in both.
`--startup-only` measures the start-up figures and memory alone.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
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
# The libraries each command truly needs (issue 33): importing them is the command's floor.
HELP_FLOOR = "import typer"
RUN_FLOOR = "import typer, attrs, cattrs, dependency_injector.providers, pygraphviz, sqlite3, filelock"
QUICKSTART_FLOOR = f"{RUN_FLOOR}, langchain_core, langgraph.graph"
ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}

# (figure, floor or None, how the limit follows from the floor, what): a figure above its limit is a missed target.
RELATIVE_TARGETS: tuple[tuple[str, str | None, Callable[[float], float], str], ...] = (
    ("help_s", "help_floor_s", lambda floor: 1.3 * floor, "orchestra --help: at most 1.3x its floor"),
    ("run_5_s", "run_floor_s", lambda floor: floor + 0.1, "run of 5 nodes: at most its floor + 0.1 s"),
    (
        "compile_2000_s", "run_floor_s", lambda floor: floor + 0.4,
        "compile of 2,000 nodes: at most its floor + 0.4 s",
    ),
    (
        "quickstart_run_s", "quickstart_floor_s", lambda floor: floor + 0.5,
        "the quick start's run: at most its floor + 0.5 s",
    ),
    (
        "run_2000_peak_rss_mb", "run_5_peak_rss_mb", lambda floor: floor + 10.0,
        "peak memory of the 2,000-node run: at most the 5-node run's + 10 MB",
    ),
    ("status_big_session_s", None, lambda _: 0.3, "status of the big session: at most 0.3 s"),
    ("last_vs_first_100_nodes", None, lambda _: 1.2, "last 100 nodes cost at most 1.2x the first 100"),
    # No target at 5 nodes: the run's floor alone (its libraries) takes several times py-attractor's whole run
    # (`run_floor_vs_py_attractor_5`); issue 33 set the targets at 200 and 2,000 nodes.
    ("peer_ratio_200", None, lambda _: 1.5, "at most 1.5x py-attractor at 200 nodes"),
    ("peer_ratio_2000", None, lambda _: 1.0, "at most 1.0x py-attractor at 2,000 nodes"),
)


def linear_dot(count: int) -> str:
    """A linear pipeline start -> n0 -> ... -> n{count-1} -> done of codergen nodes."""
    nodes = "\n".join(f'    n{i} [prompt="Step {i} of $goal"]' for i in range(count))
    chain = " -> ".join(["start", *(f"n{i}" for i in range(count)), "done"])
    return (
        f'digraph bench {{\n    graph [goal="benchmark"]\n    start [shape=Mdiamond]\n    done [shape=Msquare]\n'
        f"{nodes}\n    {chain}\n}}\n"
    )


# CPU seconds (user + system) of the last process `timed` or the quick start ran: steadier than the time it took
# on a loaded machine, reported beside it as `<figure>_cpu_s`.
last_cpu_s = [0.0]


def children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(command: Sequence[str], cwd: Path) -> float:
    """Seconds of one whole process; a failing command stops the bench with its stderr."""
    cpu = children_cpu_s()
    started = time.perf_counter()
    done = subprocess.run(list(command), cwd=cwd, env=ENV, capture_output=True, check=False)
    elapsed = time.perf_counter() - started
    last_cpu_s[0] = children_cpu_s() - cpu
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}): {done.stderr.decode()[-2000:]}")
    return elapsed


def median_of(runs: int, one: Callable[[int], float]) -> float:
    """Median of `runs` calls after one warm-up call (which fills the bytecode cache)."""
    one(-1)
    return statistics.median(one(attempt) for attempt in range(runs))


def alternating(runs: int, measures: dict[str, Callable[[int], float]]) -> dict[str, float]:
    """Median of each measure over `runs` rounds that take every measure in turn (after one warm-up round), so a
    command and its floor see the same load; and the median of its processes' CPU time (`<name>_cpu_s`)."""
    samples: dict[str, list[float]] = {name: [] for name in measures}
    cpu: dict[str, list[float]] = {name: [] for name in measures}
    for attempt in range(-1, runs):
        for name, one in measures.items():
            elapsed = one(attempt)
            if attempt >= 0:
                samples[name].append(elapsed)
                cpu[name].append(last_cpu_s[0])
    figures = {name: statistics.median(values) for name, values in samples.items()}
    figures.update({name.removesuffix("_s") + "_cpu_s": statistics.median(values) for name, values in cpu.items()})
    return figures


def python_imports(code: str, work: Path) -> Callable[[int], float]:
    """One whole process of this Python importing `code`'s libraries (a floor)."""
    return lambda _: timed([sys.executable, "-c", code], work)


MODULE_PROBE = """
import atexit, sys
atexit.register(lambda: print(len(sys.modules), file=sys.stderr))
sys.argv = ["orchestra", *sys.argv[1:]]
from orchestra_cli.main import console
console()
"""


def modules_imported(work: Path, *args: str) -> int:
    """How many modules one `orchestra ARGS` process imported (tests/e2e/compile/test_startup_imports.py says
    which may not be among them)."""
    done = subprocess.run(
        [sys.executable, "-c", MODULE_PROBE, *args], cwd=work, env=ENV, capture_output=True, text=True, check=False
    )
    return int(done.stderr.strip().splitlines()[-1])


def module_counts(work: Path) -> dict[str, int]:
    logs = work / "logs-modules"
    counts = {
        "help_modules": modules_imported(work, "--help"),
        "compile_2000_modules": modules_imported(work, "compile", "p2000.dot"),
        "run_5_modules": modules_imported(work, "run", "p5.dot", "--backend", "simulate", "--logs-root", str(logs)),
    }
    shutil.rmtree(logs, ignore_errors=True)
    return counts


def startup_figures(work: Path, runs: int) -> dict[str, float]:
    """`--help`, `compile` of 2,000 nodes and `run` of 5 and 200 nodes, each beside its floor, alternating; the
    2,000-node run (seconds, not start-up) alone."""
    figures = alternating(
        runs,
        {
            "python_startup_s": python_imports("pass", work),
            "help_floor_s": python_imports(HELP_FLOOR, work),
            "help_s": lambda _: timed([str(ORCHESTRA), "--help"], work),
            "run_floor_s": python_imports(RUN_FLOOR, work),
            "compile_2000_s": lambda _: timed([str(ORCHESTRA), "compile", "p2000.dot"], work),
            "run_5_s": lambda attempt: orchestra_run(work, 5, attempt),
            "run_200_s": lambda attempt: orchestra_run(work, 200, attempt),
        },
    )
    figures["run_2000_s"] = median_of(max(3, runs // 2), lambda attempt: orchestra_run(work, 2000, attempt))
    return figures


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


def peak_rss_figures(work: Path) -> dict[str, float]:
    """Peak resident memory of the 5-node and the 2,000-node runs (the median of three each), in MB."""
    return {
        f"run_{size}_peak_rss_mb": statistics.median(peak_rss_mb(work, size, attempt) for attempt in range(3))
        for size in (5, 2000)
    }


def peak_rss_mb(work: Path, size: int, attempt: int) -> float:
    """Peak resident memory of one whole `orchestra run` process, in MB."""
    logs = work / f"logs-rss-{size}-{attempt}"
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


def quickstart_figures(base: Path, runs: int) -> dict[str, float]:
    """The quick start's run beside its floor, alternating."""
    return alternating(
        runs,
        {
            "quickstart_floor_s": python_imports(QUICKSTART_FLOOR, base),
            "quickstart_run_s": quickstart_run(base),
        },
    )


def quickstart_run(base: Path) -> Callable[[int], float]:
    """The README quick start: a fresh copy and git repository per run (not timed), then `orchestra run`."""
    from tests.support.git_repos import IDENTITY, git

    def one(attempt: int) -> float:
        project = base / f"quickstart-{attempt}"
        shutil.copytree(ROOT / "examples" / "quickstart", project)
        git(project, "init", "-q", "-b", "main")
        git(project, "add", "-A")
        git(project, "commit", "-q", "-m", "Start")
        cpu = children_cpu_s()
        started = time.perf_counter()
        done = subprocess.run(
            [str(ORCHESTRA), "run", "pipeline.dot"], cwd=project, env={**ENV, **IDENTITY}, capture_output=True
        )
        elapsed = time.perf_counter() - started
        last_cpu_s[0] = children_cpu_s() - cpu
        if done.returncode != 0:
            raise SystemExit(f"quick start run failed: {done.stderr.decode()[-2000:]}")
        shutil.rmtree(project)
        return elapsed

    return one


def status_big_session(base: Path, turns: int, runs: int) -> dict[str, float | int]:
    """`orchestra status SESSION`, text and `--json`, of one session of about `turns` turns (built through the
    store API)."""
    from bench_session_commands import TRANSCRIPT

    from orchestra_adapters.storage.sqlite_store import SqliteSessionStore
    from tests.support.long_sessions import build_long_session

    project = base / "status"
    with SqliteSessionStore(project / ".orchestra" / "orchestra.db") as store:
        session = build_long_session(store, turns, transcript=TRANSCRIPT)
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


def targets(figures: dict[str, object]) -> list[dict[str, object]]:
    """Every target whose figure was measured: the figure, its floor, the limit and whether it is met."""
    out: list[dict[str, object]] = []
    for key, floor_key, limit_of, what in RELATIVE_TARGETS:
        value = figures.get(key)
        floor = figures.get(floor_key) if floor_key else None
        if not isinstance(value, int | float) or (floor_key and not isinstance(floor, int | float)):
            continue
        limit = round(limit_of(float(floor) if isinstance(floor, int | float) else 0.0), 3)
        row: dict[str, object] = {"figure": key, "value": value}
        if floor_key:
            row.update(floor=floor_key, floor_value=floor)
        cpu_key = key.removesuffix("_s") + "_cpu_s"
        if floor_key and cpu_key in figures and floor_key.removesuffix("_s") + "_cpu_s" in figures:
            # The same comparison in CPU time, for a loaded machine (the target is on the time taken).
            cpu, floor_cpu = figures[cpu_key], figures[floor_key.removesuffix("_s") + "_cpu_s"]
            if isinstance(cpu, float) and isinstance(floor_cpu, float):
                row.update(cpu_s=cpu, floor_cpu_s=floor_cpu, cpu_met=cpu <= limit_of(floor_cpu))
        row.update(limit=limit, met=value <= limit, target=what)
        out.append(row)
    return out


def missed(rows: list[dict[str, object]]) -> list[str]:
    """What `targets` found not met, one line each."""
    return [
        f"{row['target']}: {row['figure']} {row['value']} > {row['limit']}" for row in rows if not row["met"]
    ]


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
    parser.add_argument(
        "--startup-only", action="store_true", help="only the start-up figures, their floors and memory"
    )
    options = parser.parse_args()
    base = ROOT / ".bench-tmp"
    base.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="whole-process-", dir=base) as directory:
        work = Path(directory)
        subprocess.run(["git", "init", "-q", "-b", "main"], cwd=work, check=True)
        for size in SIZES:
            (work / f"p{size}.dot").write_text(linear_dot(size))
        runs = options.runs
        figures: dict[str, object] = {**startup_figures(work, runs), **peak_rss_figures(work), **module_counts(work)}
        figures.update(quickstart_figures(work, max(3, runs // 2)))
        if not options.startup_only:
            figures.update(status_big_session(work, options.status_turns, max(3, runs // 2)))
            figures.update(per_node_costs(work, options.flat_nodes))
            python, why_not = peer_python(options.no_peer)
            if python is None:
                print(f"py-attractor comparison {why_not}", file=sys.stderr)
                figures["peer"] = why_not
            else:
                figures.update(side_by_side(python, work, runs))
                floor, peer = figures["run_floor_s"], figures["peer_py_attractor_5_s"]
                if isinstance(floor, float) and isinstance(peer, float) and peer > 0:
                    figures["run_floor_vs_py_attractor_5"] = round(floor / peer, 2)
    figures = {key: round(value, 3) if isinstance(value, float) else value for key, value in figures.items()}
    figures["load_average"] = round(os.getloadavg()[0], 2)
    figures["targets"] = rows = targets(figures)
    figures["missed"] = missed(rows)
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
