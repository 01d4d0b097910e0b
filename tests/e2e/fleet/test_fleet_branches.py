"""Parallel branches on a fleet of real `orchestra worker`s (real Redis and PostgreSQL): `orchestra run` sends its
branches to the workers and merges them at the join; a stage naming a queue runs on that queue's workers; a worker
killed in the middle of a branch loses nothing (the branch runs again on another worker); `orchestra run` registers
its session, so the fleet view lists it and `orchestra cancel` stops it."""

from __future__ import annotations

import json
import re
import signal
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from orchestra_adapters.dispatch.ledger import PostgresFleetLedger
from orchestra_adapters.locks.postgres_session_locks import PostgresSessionLocks
from orchestra_core.model import records as r
from orchestra_core.model.turn import AgentTurn
from orchestra_core.ports.session_store import SessionStatus
from orchestra_core.session.api import history
from orchestra_core.session.codec import decode_record
from tests.e2e.fleet.support import Fleet, describe, wait_for
from tests.support.fleet_servers import RedisServer
from tests.support.git_repos import git
from tests.support.orchestra_project import ORCHESTRA, orchestra

pytestmark = pytest.mark.slow

GPU_PIPELINE = """digraph gpus {
    start [shape=Mdiamond]; exit [shape=Msquare]
    fan [shape=component]
    left [prompt="Write the left module", queue="gpu"]
    right [shape=parallelogram, queue="gpu", tool_command="echo started > right.txt; HOLD; echo done >> right.txt"]
    join [shape=tripleoctagon]
    start -> fan
    fan -> left -> join
    fan -> right -> join
    join -> exit
}
"""
PLAIN_PIPELINE = GPU_PIPELINE.replace(', queue="gpu"', "").replace("HOLD; ", "")
# A node holds until the test has killed a worker in the middle of one (a fixed sleep could end first under load).
HOLD = "until [ -e RELEASE ]; do sleep 0.1; done"
SLEEPY = """digraph sleepy {
    start [shape=Mdiamond]; exit [shape=Msquare]
    nap [shape=parallelogram, tool_command="echo $$ > nap.pid; sleep 60"]
    start -> nap -> exit
}
"""
CASSETTE = r"""
nodes:
  left:
    - content: "The left module."
      tool_calls:
        - {name: "project:write-file", args: {path: left.txt, content: "left\n"}}
    - content: "Done."
default: "Done."
"""
SESSIONS = 3
CLASH = """digraph clash {
    start [shape=Mdiamond]; exit [shape=Msquare]
    fan [shape=component]
    left [prompt="Edit the readme"]
    right [prompt="Edit the readme too"]
    join [shape=tripleoctagon]
    fixer [prompt="Resolve the merge conflict"]
    start -> fan
    fan -> left -> join
    fan -> right -> join
    join -> fixer [condition="outcome=fail"]
    join -> exit [condition="outcome=success"]
    fixer -> exit
}
"""
CLASH_CASSETTE = r"""
nodes:
  left:
    - content: "Left."
      tool_calls:
        - {name: "project:write-file", args: {path: README.md, content: "left\n"}}
    - content: "Done."
  right:
    - content: "Right."
      tool_calls:
        - {name: "project:write-file", args: {path: README.md, content: "right\n"}}
    - content: "Done."
  fixer:
    - content: "Reading the conflict."
      tool_calls:
        - {name: "project:read-file", args: {path: README.md}}
    - content: "Keeping both."
      tool_calls:
        - {name: "project:write-file", args: {path: README.md, content: "left and right\n"}}
    - content: "Done."
default: "Done."
"""


def _records(store: Any, session_id: str) -> list[object]:
    return [decode_record(turn) for turn in history(store, session_id)]


def _fan_in_lines(store: Any, session: str) -> tuple[str, ...]:
    return next(
        record.branch_session_ids for record in _records(store, session)
        if isinstance(record, r.ParallelExecution) and record.event is r.ParallelEvent.FAN_IN
    )  # fmt: skip


def _running_right(
    store: Any, ledger: PostgresFleetLedger, locks: PostgresSessionLocks, sessions: list[str]
) -> tuple[str, str] | None:
    """A branch `fan:right` whose node has started on a gpu worker (its lock held): (session, worker)."""
    for session in sessions:
        entry = ledger.get_branch(session, "fan:right")
        if entry is None or entry.state != "running" or entry.worker not in ("g1", "g2") or not locks.holder(entry.line):
            continue
        started = [
            rec for rec in _records(store, entry.line)
            if isinstance(rec, r.NodeExecution) and rec.node_id == "right" and rec.event is r.NodeEvent.STARTED
        ]  # fmt: skip
        if started:
            return session, entry.worker
    return None


def test_a_gpu_worker_killed_in_the_middle_of_a_branch_loses_nothing(
    tmp_path: Path, redis_server: RedisServer, postgres_dsn: str
) -> None:
    redis_server.flush()
    release = tmp_path / "release"
    files = {"gpus.dot": GPU_PIPELINE.replace("HOLD", HOLD.replace("RELEASE", str(release))), "cassette.yaml": CASSETTE}
    fleet = Fleet(tmp_path, postgres_dsn, redis_server.url, files)
    try:
        fleet.start_worker("main", concurrency=SESSIONS)
        fleet.start_worker("g1", queues=("gpu",))
        fleet.start_worker("g2", queues=("gpu",))
        sessions = []
        for _ in range(SESSIONS):
            done = orchestra("submit", "gpus.dot", "--json", cwd=fleet.submitter, env=fleet.env, timeout=60)
            assert done.returncode == 0, done.stderr
            sessions.append(json.loads(done.stdout)["session_id"])
        store = fleet.store()
        ledger = PostgresFleetLedger(postgres_dsn)
        locks = PostgresSessionLocks(postgres_dsn)
        running = wait_for("a right node running on a gpu worker", lambda: _running_right(store, ledger, locks, sessions), 90)
        session, victim = running
        fleet.kill(victim)
        release.touch()
        survivor = "g2" if victim == "g1" else "g1"

        def all_ended() -> bool:
            return all(store.get_session(s).status in (SessionStatus.SUCCESS, SessionStatus.FAIL) for s in sessions)

        def explain() -> str:
            unended = [s for s in sessions if store.get_session(s).status not in (SessionStatus.SUCCESS, SessionStatus.FAIL)]
            logs = [f"-- {name}.log\n{fleet.log(name)[-4000:]}" for name in ("main", "g1", "g2")]
            return "\n".join([*(describe(store, s, ledger) for s in unended), *logs])

        wait_for("every session to end", all_ended, 150, every=0.5, explain=explain)
        statuses = {s: store.get_session(s).status for s in sessions}
        failed = [s for s, status in statuses.items() if status is not SessionStatus.SUCCESS]
        if failed:  # pytest.fail, not assert: an assertion's message is cut short
            reports = [orchestra("status", s, cwd=fleet.submitter, env=fleet.env).stdout for s in failed]
            logs = [f"-- {name}.log\n{fleet.log(name)[-5000:]}" for name in ("main", "g1", "g2")]
            pytest.fail("\n".join([f"{statuses}", *reports, *(describe(store, s, ledger) for s in failed), *logs]))
        for each in sessions:
            entries = {entry.branch: entry for entry in ledger.branches(each)}
            assert {entry.worker for entry in entries.values()} <= {"g1", "g2"}, entries  # only gpu workers ran them
            lines = _fan_in_lines(store, each)
            if sorted(lines) != sorted(entry.line for entry in entries.values()):
                pytest.fail(f"fan-in lines {lines}\n{describe(store, each, ledger)}")
            head = git(fleet.remote, "rev-parse", f"refs/heads/orchestra/gpus/{each}").strip()
            tree = git(fleet.remote, "ls-tree", "--name-only", head).split()
            assert {"left.txt", "right.txt"} <= set(tree)
            turns = [(line, rec) for line in (each, *lines) for rec in _records(store, line) if isinstance(rec, AgentTurn)]
            written = [turn for _line, turn in turns if turn.git_sha]
            assert written  # the left agent's commit, recorded in its branch's line
            for turn in written:  # every commit the record names is on the remote's session branch
                git(fleet.remote, "merge-base", "--is-ancestor", turn.git_sha, head)
            counts = Counter((line, turn.node_id, turn.turn_number) for line, turn in turns)
            assert max(counts.values()) == 1, counts  # no agent turn recorded twice
        entry = ledger.get_branch(session, "fan:right")
        assert entry is not None and entry.pickups == 1 and entry.worker == survivor
        lost = [
            child.session_id for child in store.child_sessions(session)
            if child.session_id not in _fan_in_lines(store, session)
        ]  # fmt: skip
        said = [
            rec for line in lost for rec in _records(store, line)
            if isinstance(rec, r.PipelineLifecycle) and rec.event is r.LifecycleEvent.INTERRUPTED
        ]  # fmt: skip
        said = [rec for rec in said if "branch fan:right " in rec.error]  # the victim may have run its left too
        assert len(said) == 1 and f"worker {victim} was lost" in said[0].error and entry.line in said[0].error
        interrupted = [
            rec.node_id for line in lost for rec in _records(store, line)
            if isinstance(rec, r.NodeExecution) and rec.event is r.NodeEvent.INTERRUPTED
        ]  # fmt: skip
        assert interrupted.count("right") == 1
        ledger.close()
        locks.close()
        store.close()
    finally:
        fleet.stop_all()


def test_orchestra_run_sends_its_branches_to_the_fleet(tmp_path: Path, redis_server: RedisServer, postgres_dsn: str) -> None:
    redis_server.flush()
    fleet = Fleet(tmp_path, postgres_dsn, redis_server.url, {"plain.dot": PLAIN_PIPELINE, "cassette.yaml": CASSETTE}, claim_after="30s")
    try:
        fleet.start_worker("w1")
        wait_for("the worker's heartbeat", lambda: "w1" in fleet.log("w1"), 60)
        done = orchestra("run", "plain.dot", "--json", cwd=fleet.submitter, env=fleet.env, timeout=120)
        assert done.returncode == 0, done.stderr + fleet.log("w1")
        session = json.loads(done.stdout)["session_id"]
        ledger = PostgresFleetLedger(postgres_dsn)
        entries = ledger.branches(session)
        assert sorted(entry.branch for entry in entries) == ["fan:left", "fan:right"]
        assert {entry.worker for entry in entries} == {"w1"} and {entry.state for entry in entries} == {"done"}
        said = fleet.log("w1")
        for branch in ("fan:left", "fan:right"):  # the worker's log: each task as it starts and as it ends
            assert re.search(rf"w1: branch {branch} of session {session}: task \w+ started\n", said), said
            assert re.search(rf"w1: branch {branch} of session {session}: task \w+ ran success\n", said), said
        registered = ledger.get(session)
        assert registered is not None and registered.state == "done" and registered.submission["origin"] == "run"
        shown = json.loads(orchestra("status", "--json", cwd=fleet.submitter, env=fleet.env).stdout)
        row = next(row for row in shown["fleet"]["sessions"] if row["session_id"] == session)
        assert {b["branch"]: b["worker"] for b in row["branches"]} == {"fan:left": "w1", "fan:right": "w1"}
        worktree = fleet.submitter / ".orchestra" / "worktrees" / session / "project"
        assert {"left.txt", "right.txt"} <= {path.name for path in worktree.iterdir()}
        ledger.close()
    finally:
        fleet.stop_all()


def test_orchestra_cancel_stops_a_session_orchestra_run_runs(
    tmp_path: Path, redis_server: RedisServer, postgres_dsn: str
) -> None:
    redis_server.flush()
    fleet = Fleet(tmp_path, postgres_dsn, redis_server.url, {"sleepy.dot": SLEEPY, "cassette.yaml": CASSETTE}, with_repo=False)
    try:
        output = tmp_path / "run.out"
        with output.open("w") as sink:
            running = subprocess.Popen(
                [str(ORCHESTRA), "run", "sleepy.dot"], cwd=fleet.submitter, env={**fleet.env, "NO_COLOR": "1"},
                stdout=sink, stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
        pid_file = fleet.submitter / "nap.pid"
        wait_for("the nap to start", lambda: pid_file.exists() or running.poll() is not None, 60)
        assert running.poll() is None, output.read_text()
        ledger = PostgresFleetLedger(postgres_dsn)
        session = wait_for("the session in the ledger", lambda: next((e.session_id for e in ledger.entries()), None), 30)
        done = orchestra("cancel", session, cwd=fleet.submitter, env=fleet.env, timeout=60)
        assert done.returncode == 0, (done.stdout, done.stderr, output.read_text())
        assert f"session {session} cancelled" in done.stdout
        running.wait(timeout=30)
        assert running.returncode == 1 and "cancelled" in output.read_text(), output.read_text()
        store = fleet.store()
        assert store.get_session(session).status is SessionStatus.CANCELLED
        pid = int(pid_file.read_text().strip())
        wait_for("the nap's process to be gone", lambda: not Path(f"/proc/{pid}").exists(), 10)
        store.close()
        ledger.close()
    finally:
        if running.poll() is None:
            running.send_signal(signal.SIGKILL)
        fleet.stop_all()


def test_a_conflict_between_branches_run_on_the_fleet_reaches_the_fixer_as_on_one_machine(
    tmp_path: Path, redis_server: RedisServer, postgres_dsn: str
) -> None:
    redis_server.flush()
    fleet = Fleet(tmp_path, postgres_dsn, redis_server.url, {"clash.dot": CLASH, "cassette.yaml": CLASH_CASSETTE},
                  claim_after="30s")  # fmt: skip
    try:
        fleet.start_worker("w1")
        wait_for("the worker's heartbeat", lambda: "w1" in fleet.log("w1"), 60)
        done = orchestra("run", "clash.dot", "--json", cwd=fleet.submitter, env=fleet.env, timeout=120)
        assert done.returncode == 0, done.stderr + fleet.log("w1")
        document = json.loads(done.stdout)
        session = document["session_id"]
        assert (document["node_outcomes"]["join"], document["node_outcomes"]["fixer"]) == ("fail", "success")
        ledger = PostgresFleetLedger(postgres_dsn)
        assert {(entry.branch, entry.worker) for entry in ledger.branches(session)} == {("fan:left", "w1"), ("fan:right", "w1")}
        store = fleet.store()
        fixer = [rec for rec in _records(store, session) if isinstance(rec, AgentTurn) and rec.node_id == "fixer"]
        seen = next(turn.tool_calls[0].result for turn in fixer if turn.tool_calls and turn.tool_calls[0].name.endswith("read-file"))
        assert seen is not None and "<<<<<<<" in seen and "left" in seen and "right" in seen
        branch = document["repos"]["project"]["branch"]
        clone = fleet.submitter / "repo"
        fixed, conflicted = git(clone, "log", "--first-parent", "--format=%H", "-2", branch).split()
        assert "Orchestra-Conflicts: README.md" in git(clone, "log", "-1", "--format=%B", conflicted)
        assert git(clone, "show", f"{fixed}:README.md") == "left and right\n"
        assert not list((fleet.submitter / ".orchestra" / "worktrees" / session).glob("fan:*"))
        store.close()
        ledger.close()
    finally:
        fleet.stop_all()
