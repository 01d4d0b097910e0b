"""The decisive fleet test (issue 22): two real `orchestra worker`s, six sessions each with a parallel stage, one
worker SIGKILLed in the middle of a node. All six end `success`, their branches on the remote hold every commit,
and every agent turn is recorded once; the record says which node was retried after the lost worker."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from orchestra_adapters.locks.postgres_session_locks import PostgresSessionLocks
from orchestra_core.model import records as r
from orchestra_core.model.turn import AgentTurn
from orchestra_core.ports.session_store import SessionStatus
from orchestra_core.session.api import history
from orchestra_core.session.codec import decode_record
from tests.e2e.fleet.support import Fleet, describe, wait_for
from tests.support.fleet_servers import RedisServer
from tests.support.git_repos import git
from tests.support.orchestra_project import orchestra

pytestmark = pytest.mark.slow

PIPELINE = """digraph fleet {
    start [shape=Mdiamond]; exit [shape=Msquare]
    fan [shape=component]
    left [prompt="Write the left module"]
    right [prompt="Write the right module"]
    join [shape=tripleoctagon]
    slow [shape=parallelogram, tool_command="echo started > slow.txt; HOLD; echo done >> slow.txt"]
    start -> fan
    fan -> left -> join
    fan -> right -> join
    join -> slow -> exit
}
"""
CASSETTE = r"""
nodes:
  left:
    - content: "The left module."
      tool_calls:
        - {name: "project:write-file", args: {path: left.txt, content: "left\n"}}
    - content: "Done."
  right:
    - content: "The right module."
      tool_calls:
        - {name: "project:write-file", args: {path: right.txt, content: "right\n"}}
    - content: "Done."
default: "Done."
"""
SESSIONS = 6
# A node holds until the test has killed a worker in the middle of one (a fixed sleep could end first under load).
HOLD = "until [ -e RELEASE ]; do sleep 0.1; done"


def _records(store, session_id: str) -> list[tuple[str, object]]:
    return [(turn.turn_id, decode_record(turn)) for turn in history(store, session_id)]


def _running_slow(store, locks: PostgresSessionLocks, sessions: list[str]) -> tuple[str, str] | None:
    """A session whose `slow` node has started (and not ended) on a worker: (session, worker)."""
    for session in sessions:
        open_nodes: set[str] = set()
        for _id, record in _records(store, session):
            if isinstance(record, r.NodeExecution) and record.node_id == "slow":
                if record.event is r.NodeEvent.STARTED:
                    open_nodes.add("slow")
                else:
                    open_nodes.discard("slow")
        holder = locks.holder(session)
        if open_nodes and holder:
            return session, holder
    return None


def test_a_worker_killed_mid_node_loses_nothing(tmp_path: Path, redis_server: RedisServer, postgres_dsn: str) -> None:
    redis_server.flush()
    release = tmp_path / "release"
    pipeline = PIPELINE.replace("HOLD", HOLD.replace("RELEASE", str(release)))
    fleet = Fleet(tmp_path, postgres_dsn, redis_server.url, {"fleet.dot": pipeline, "cassette.yaml": CASSETTE})
    try:
        fleet.start_worker("w1")
        fleet.start_worker("w2")
        sessions = []
        for _ in range(SESSIONS):
            done = orchestra("submit", "fleet.dot", "--json", cwd=fleet.submitter, env=fleet.env, timeout=60)
            assert done.returncode == 0, done.stderr
            sessions.append(json.loads(done.stdout)["session_id"])
        store = fleet.store()
        locks = PostgresSessionLocks(postgres_dsn)
        victim_session, victim = wait_for("a slow node running", lambda: _running_slow(store, locks, sessions), 90)
        fleet.kill(victim)
        release.touch()
        survivor = "w2" if victim == "w1" else "w1"

        def all_ended() -> bool:
            return all(store.get_session(s).status in (SessionStatus.SUCCESS, SessionStatus.FAIL) for s in sessions)

        def explain() -> str:
            unended = [s for s in sessions if store.get_session(s).status not in (SessionStatus.SUCCESS, SessionStatus.FAIL)]
            logs = [f"-- {name}.log\n{fleet.log(name)[-6000:]}" for name in ("w1", "w2")]
            return "\n".join([*(describe(store, s) for s in unended), *logs])

        wait_for("every session to end", all_ended, 150, every=0.5, explain=explain)
        statuses = {s: store.get_session(s).status for s in sessions}
        failed = [s for s, status in statuses.items() if status is not SessionStatus.SUCCESS]
        reports = [orchestra("status", s, cwd=fleet.submitter, env=fleet.env).stdout for s in failed]
        if failed:  # pytest.fail, not assert: an assertion's message is cut short
            logs = [f"-- {name}.log\n{fleet.log(name)[-6000:]}" for name in ("w1", "w2")]
            pytest.fail("\n".join([f"{statuses}", *reports, *(describe(store, s) for s in failed), *logs]))
        assert locks.holder(victim_session) is None

        remote = fleet.remote
        assert remote is not None
        for session in sessions:
            records = _records(store, session)
            # The fan-in of the run that finished (history is newest first). A worker killed between a fan-in and
            # its checkpoint leaves an earlier fan-in whose commits never left that machine; the session then runs
            # its fan-out again from the checkpoint before it, and nothing that was pushed is lost.
            fan_ins = [
                record for _id, record in records
                if isinstance(record, r.ParallelExecution) and record.event is r.ParallelEvent.FAN_IN
            ]  # fmt: skip
            branch_sessions = list(fan_ins[0].branch_session_ids)
            head = git(remote, "rev-parse", f"refs/heads/orchestra/fleet/{session}").strip()
            turns: list[tuple[str, AgentTurn]] = []
            for line in [session, *branch_sessions]:
                own = _records(store, line)
                turns += [(line, rec) for _id, rec in own if isinstance(rec, AgentTurn)]
            written = [turn for _line, turn in turns if turn.git_sha]
            if len(written) < 2:  # left and right each committed once
                pytest.fail(describe(store, session))
            for turn in written:  # every commit the record names is on the remote's session branch
                git(remote, "merge-base", "--is-ancestor", turn.git_sha, head)  # raises when it is not
            counts = Counter((line, turn.node_id, turn.turn_number) for line, turn in turns)
            assert max(counts.values()) == 1, (counts, describe(store, session))  # no agent turn recorded twice
        victim_records = [record for _id, record in _records(store, victim_session)]
        pickups = [
            record for record in victim_records
            if isinstance(record, r.PipelineLifecycle) and record.event is r.LifecycleEvent.INTERRUPTED
        ]  # fmt: skip
        assert pickups and f"worker {victim} was lost" in pickups[0].error and survivor in pickups[0].error
        interrupted = [
            record for record in victim_records
            if isinstance(record, r.NodeExecution) and record.event is r.NodeEvent.INTERRUPTED
        ]  # fmt: skip
        assert [record.node_id for record in interrupted] == ["slow"]
        shown = json.loads(orchestra("status", "--json", cwd=fleet.submitter, env=fleet.env).stdout)
        assert survivor in {worker["name"] for worker in shown["fleet"]["workers"]}
        picked = {row["session_id"]: row["pickups"] for row in shown["fleet"]["sessions"]}
        assert picked[victim_session] >= 1 and set(picked) == set(sessions)
        store.close()
        locks.close()
    finally:
        fleet.stop_all()
