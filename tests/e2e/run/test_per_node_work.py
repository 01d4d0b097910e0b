"""Regression guards of the per-node cost (issue 16), without timings: what one node of a simulated run does.

`orchestra run --backend simulate` of linear pipelines runs in a real process under `tests/support/
work_counter.py`, which counts files opened and written, renames, fsyncs, subprocesses, SQLite transactions
and statements, and bytes written. Runs of different lengths are subtracted, so start-up and teardown cancel
and what is left is the work of the extra nodes.

PER_NODE_LIMITS (and PER_RUN_LIMITS, for a whole run) is the one place to tighten when a node does less:
set each to the new count.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.git_repos import IDENTITY, git

COUNTER = Path(__file__).resolve().parents[2] / "support" / "work_counter.py"
QUICKSTART = Path(__file__).resolve().parents[3] / "examples" / "quickstart"

# What one codergen node of a simulated linear run may do, at most, on the engine's thread (measured on main,
# before issue 16's per-node work: 6 opens, of them 5 for writing: prompt.md, response.md, status.json,
# context.json, checkpoint.json's temporary file; 1 rename; 3 store transactions of 16 statements; no fsync,
# no subprocess). Issue 16: checkpoint.json is written by a background writer (counted apart, below), so the
# engine's thread opens 5 files (4 stage files written, the failing read of the status.json a stage may
# write) and renames none; then the stage files are written by a background writer too (counted apart,
# below), and the engine asks for the status.json of a stage it handed to no one without opening it: the
# engine's thread opens no file.
PER_NODE_LIMITS = {
    "files_opened": 0,
    "files_written": 0,
    "renames": 0,
    # issue 16: the engine removed a stage's status.json before each attempt (an unlink that failed: nothing
    # was there); a stage file never written, in a stage directory never handed out, under a round directory
    # new to this run, is known not to exist
    "unlinks": 0,
    "fsyncs": 0,
    "subprocesses": 0,
    # issue 16: a node's start at once, then its other turns and its checkpoint in one write (5 statements
    # each); then its start waits for that write too (a slow node's start is written by the flusher)
    "store_transactions": 1,
    "store_statements": 5,
}
# What a whole simulated run without workspace repos may do besides its nodes, at most (outside every git
# repository no git process is started; inside one, a single `git rev-parse` finds it to exclude .orchestra/).
PER_RUN_LIMITS = {"subprocesses": 0}
# The background checkpoint writer writes each running checkpoint at most once (the start's and one per node;
# the final one is written on the engine's thread), fewer when a newer one replaced a pending one: how many
# depends on the disk's speed, so only this bound is deterministic.
WRITER_RENAMES_PER_NODE = 1
# The background stage file writer writes each stage file queued to it: a simulated codergen node's prompt.md,
# context.json, response.md and status.json.
STAGE_WRITER_FILES_PER_NODE = 4
# The README quick start's run (examples/quickstart: the LangGraph agent on its cassette, a git workspace, two
# per-turn commits) may start at most this many git processes. Issue 16: 54 before; the recorder no longer
# reads the branch heads the engine's checkpoint has just read (47). Issue 31: its tool stage `check` looks for
# what it changed, to commit it (a `git status` before and after the command: 50).
QUICKSTART_GIT_PROCESSES = 50
# Bytes per node later in a run may exceed those earlier by this share (numbers such as durations vary in
# width); a checkpoint rewritten whole after every node grows by far more.
BYTES_SLACK = 0.03


def linear_dot(count: int) -> str:
    nodes = "\n".join(f'    n{i} [prompt="Step {i}"]' for i in range(count))
    chain = " -> ".join(["start", *(f"n{i}" for i in range(count)), "done"])
    return (
        f"digraph guard {{\n    start [shape=Mdiamond]\n    done [shape=Msquare]\n{nodes}\n    {chain}\n}}\n"
    )


def counted(out: Path, *arguments: str, cwd: Path, env: dict[str, str] | None = None) -> dict[str, int]:
    """The counts of `orchestra ARGUMENTS...` run under the work counter in `cwd` (extra `env`), which must
    succeed; written to and read from `out`."""
    result = subprocess.run(
        [sys.executable, str(COUNTER), str(out), *arguments],
        capture_output=True, text=True, cwd=cwd, timeout=120, env={**os.environ, "NO_COLOR": "1", **(env or {})},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    counts: dict[str, int] = json.loads(out.read_text())
    return counts


def counted_run(project: Path, nodes: int) -> dict[str, int]:
    """The counts of one whole `orchestra run --backend simulate` of a `nodes`-node linear pipeline."""
    pipeline = project / f"linear{nodes}.dot"
    pipeline.write_text(linear_dot(nodes))
    logs = project / f"logs{nodes}"
    counts = counted(
        project / f"counts{nodes}.json", "run", str(pipeline), "--backend", "simulate", "--logs-root", str(logs),
        cwd=project,
    )  # fmt: skip
    assert (logs / f"n{nodes - 1}" / "status.json").is_file()
    return counts


def test_one_node_does_no_more_work_than_its_limits(tmp_path: Path) -> None:
    small, large = counted_run(tmp_path, 10), counted_run(tmp_path, 40)
    costs = {
        key: (large.get(key, 0) - small.get(key, 0)) / 30
        for key in set(small) | set(large) | set(PER_NODE_LIMITS)
    }
    assert costs["store_transactions"] > 0 and costs["stage_writer_files_written"] > 0, f"the counter saw nothing: {costs}"
    assert costs["stage_writer_files_written"] <= STAGE_WRITER_FILES_PER_NODE, f"stage files per node grew: {costs}"
    grown = {key: costs[key] for key, limit in PER_NODE_LIMITS.items() if costs[key] > limit}
    assert not grown, f"per-node work grew past PER_NODE_LIMITS: {grown} (all counts per node: {costs})"
    run_grown = {key: small.get(key, 0) for key, limit in PER_RUN_LIMITS.items() if small.get(key, 0) > limit}
    assert not run_grown, f"a 10-node run grew past PER_RUN_LIMITS: {run_grown} (all its counts: {small})"
    written = large.get("checkpoint_writer_renames", 0)
    assert 0 < written <= 1 + 40 * WRITER_RENAMES_PER_NODE, f"the background writer renamed {written} checkpoints"


@pytest.fixture(scope="module")
def runs_of_20_50_80(tmp_path_factory: pytest.TempPathFactory) -> dict[int, dict[str, int]]:
    """The counts of simulated linear runs of 20, 50 and 80 nodes in one project (node ids n20..n79 all have
    two digits, so the windows 20-49 and 50-79 write names of the same width)."""
    project = tmp_path_factory.mktemp("positions")
    counted_run(project, 5)  # creates the store and publishes the type bundle, once
    return {nodes: counted_run(project, nodes) for nodes in (20, 50, 80)}


@pytest.mark.parametrize(
    "key",
    [
        "store_bytes",
        # The engine's thread and the store: the node's turns. checkpoint.json, restating every
        # completed node, is left out (`checkpoint_writer_bytes_written`): the background writer rewrites it as
        # often as the disk allows, so its bytes per node depend on timing, not on the node's position alone.
        "bytes_written",
        # The stage files, written by the background stage writer.
        "stage_writer_bytes_written",
    ],
)
def test_bytes_per_node_do_not_grow_with_its_position(
    runs_of_20_50_80: dict[int, dict[str, int]], key: str
) -> None:
    counts = {nodes: run[key] for nodes, run in runs_of_20_50_80.items()}
    early = (counts[50] - counts[20]) / 30
    late = (counts[80] - counts[50]) / 30
    assert early > 0
    assert late <= early * (1 + BYTES_SLACK), (
        f"{key} per node: {early:.0f} at nodes 20-49, {late:.0f} at 50-79"
    )


def test_the_quick_start_run_starts_no_more_git_processes_than_its_limit(tmp_path: Path) -> None:
    project = tmp_path / "quickstart"
    shutil.copytree(QUICKSTART, project)
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "Start")
    counts = counted(tmp_path / "counts.json", "run", "pipeline.dot", cwd=project, env=IDENTITY)
    log = git(project, "log", "--format=%s", "orchestra/quickstart/1").splitlines()
    assert len(log) == 3, log  # the start and the agent's two per-turn commits
    started = counts.get("git_processes", 0)
    assert 0 < started <= QUICKSTART_GIT_PROCESSES, (
        f"the quick start's run started {started} git processes (limit QUICKSTART_GIT_PROCESSES = "
        f"{QUICKSTART_GIT_PROCESSES})"
    )
