"""The FleetLedger contract: sessions and parallel branches handed to a fleet, every change of state a
compare-and-set that exactly one of many contenders wins, cancel requests, and the workers' heartbeats."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from orchestra_core.ports.fleet import BranchEntry, FleetEntry, FleetLedger, WorkerBeat
from orchestra_core.testing.contracts._base import PortContract

SUBMISSION = {"pipeline_blob": "ab" * 32, "context": {"pr": 7, "tags": ["a", "b"]}, "auto_approve": True}
RESULT = {"status": "success", "completed_nodes": ["a", "b"], "context_changes": {"score": 0.5, "notes": None}}


class FleetLedgerContract(PortContract):
    """A runner implements `make_ledger()` (a fresh, empty ledger for each test)."""

    ledger: FleetLedger

    def make_ledger(self) -> FleetLedger:
        """The ledger under test."""
        raise NotImplementedError

    def setup_method(self, method: object = None) -> None:
        super().setup_method(method)
        self.ledger = self.make_ledger()
        self.add_cleanup(self.ledger.close)

    # sessions ---------------------------------------------------------------------------------------------
    def test_is_a_fleet_ledger_that_names_its_location(self) -> None:
        assert isinstance(self.ledger, FleetLedger)
        assert isinstance(self.ledger.location, str) and self.ledger.location

    def test_an_added_session_is_queued_with_its_submission(self) -> None:
        entry = self.ledger.add("s1", "t1", "gpu", SUBMISSION)
        assert isinstance(entry, FleetEntry)
        assert (entry.session_id, entry.state, entry.task_id, entry.queue) == ("s1", "queued", "t1", "gpu")
        assert dict(self.ledger.get("s1").submission) == SUBMISSION  # type: ignore[union-attr]
        assert entry.pickups == 0 and not entry.cancel_requested and entry.updated_at is not None

    def test_adding_a_session_again_replaces_its_entry(self) -> None:
        self.ledger.add("s1", "t1", "q", {"origin": "submit"})
        self.ledger.start("s1", "w1")
        self.ledger.request_cancel("s1")
        self.ledger.finish("s1", "w1")
        entry = self.ledger.add("s1", "", "other", {"origin": "run"})
        assert (entry.state, entry.task_id, entry.queue, dict(entry.submission)) == ("queued", "", "other", {"origin": "run"})
        assert not entry.cancel_requested and entry.worker == ""

    def test_an_unknown_session_has_no_entry(self) -> None:
        assert self.ledger.get("nope") is None
        assert self.ledger.start("nope", "w1") is None
        assert self.ledger.request_cancel("nope") is None
        assert self.ledger.requeue("nope", "t1", "t2") is False

    def test_a_session_runs_then_finishes_and_stays_done(self) -> None:
        self.ledger.add("s1", "t1", "q", {})
        started = self.ledger.start("s1", "w1")
        assert started is not None and (started.state, started.worker) == ("running", "w1")
        self.ledger.finish("s1", "w1")
        done = self.ledger.get("s1")
        assert done is not None and (done.state, done.worker) == ("done", "w1")
        assert self.ledger.start("s1", "w2") is None  # an ended session is never started again
        self.ledger.finish("s1", "")
        assert self.ledger.get("s1").worker == "w1"  # type: ignore[union-attr]  # "" keeps the last worker

    def test_a_queued_session_is_taken_by_exactly_one_of_many(self) -> None:
        self.ledger.add("s1", "t1", "q", {})
        taken = _race(8, lambda n: self.ledger.take("s1", f"w{n}") is not None)
        assert sum(taken) == 1
        entry = self.ledger.get("s1")
        assert entry is not None and (entry.state, entry.worker) == ("running", f"w{taken.index(True)}")
        assert self.ledger.take("nope", "w1") is None
        self.ledger.finish("s1", "")
        assert self.ledger.take("s1", "w9") is None  # only a queued session is taken

    def test_a_queued_session_is_resent_once_under_a_new_task_id(self) -> None:
        self.ledger.add("s1", "t1", "q", {})
        wins = _race(6, lambda n: self.ledger.resend("s1", "t1", f"t-{n}"))
        assert sum(wins) == 1
        entry = self.ledger.get("s1")
        assert entry is not None and (entry.state, entry.task_id, entry.pickups) == ("queued", f"t-{wins.index(True)}", 0)
        self.ledger.take("s1", "w1")
        assert self.ledger.resend("s1", entry.task_id, "t-late") is False  # running: not resent
        self.ledger.add("s2", "t1", "q", {})
        self.ledger.request_cancel("s2")
        assert self.ledger.resend("s2", "t1", "t2") is False  # cancelled: never sent again
        assert self.ledger.resend("nope", "t1", "t2") is False

    def test_entries_filter_by_state_newest_first(self) -> None:
        for name in ("a", "b", "c"):
            self.ledger.add(name, f"t-{name}", "q", {})
            time.sleep(0.01)
        self.ledger.start("a", "w1")
        assert [e.session_id for e in self.ledger.entries(states=("running",))] == ["a"]
        assert [e.session_id for e in self.ledger.entries(states=("queued",))] == ["c", "b"]
        assert self.ledger.entries()[0].session_id == "a"
        assert len(self.ledger.entries(limit=2)) == 2

    def test_a_requeue_is_won_by_exactly_one_of_many(self) -> None:
        self.ledger.add("s1", "t1", "q", {})
        self.ledger.start("s1", "w1")
        wins = _race(8, lambda n: self.ledger.requeue("s1", "t1", f"new-{n}"))
        assert sum(wins) == 1
        entry = self.ledger.get("s1")
        assert entry is not None and entry.state == "queued" and entry.pickups == 1
        assert entry.task_id == f"new-{wins.index(True)}"
        assert self.ledger.requeue("s1", "t1", "late") is False  # the old task id no longer matches

    def test_a_queued_session_is_not_requeued(self) -> None:
        self.ledger.add("s1", "t1", "q", {})
        assert self.ledger.requeue("s1", "t1", "t2") is False

    def test_a_cancel_request_is_kept(self) -> None:
        self.ledger.add("s1", "t1", "q", {})
        entry = self.ledger.request_cancel("s1")
        assert entry is not None and entry.cancel_requested
        assert self.ledger.get("s1").cancel_requested  # type: ignore[union-attr]

    # branches ---------------------------------------------------------------------------------------------
    def test_an_added_branch_is_queued_and_listed_under_its_session(self) -> None:
        entry = self.ledger.add_branch("s1", "fan:a", "t1", "gpu", "41")
        assert isinstance(entry, BranchEntry)
        assert (entry.session_id, entry.branch, entry.state, entry.task_id, entry.queue, entry.line) == (
            "s1", "fan:a", "queued", "t1", "gpu", "41",
        )  # fmt: skip
        self.ledger.add_branch("s1", "fan:b", "t2", "q", "42")
        self.ledger.add_branch("s2", "fan:a", "t3", "q", "43")
        assert sorted(e.branch for e in self.ledger.branches("s1")) == ["fan:a", "fan:b"]
        assert self.ledger.get_branch("s2", "fan:b") is None
        assert self.ledger.branches("nope") == []

    def test_a_branch_is_claimed_by_exactly_one_of_many(self) -> None:
        self.ledger.add_branch("s1", "fan:a", "t1", "q", "41")
        claims = _race(8, lambda n: self.ledger.claim_branch("s1", "fan:a", "t1", f"w{n}") is not None)
        assert sum(claims) == 1
        entry = self.ledger.get_branch("s1", "fan:a")
        assert entry is not None and entry.state == "running" and entry.worker == f"w{claims.index(True)}"

    def test_a_claim_needs_the_current_task_id(self) -> None:
        self.ledger.add_branch("s1", "fan:a", "t1", "q", "41")
        assert self.ledger.claim_branch("s1", "fan:a", "other", "w1") is None
        self.ledger.add_branch("s1", "fan:a", "t2", "q", "44")  # the fan-out ran again: the old task is void
        assert self.ledger.claim_branch("s1", "fan:a", "t1", "w1") is None
        claimed = self.ledger.claim_branch("s1", "fan:a", "t2", "w1")
        assert claimed is not None and claimed.line == "44"

    def test_a_finished_branch_keeps_its_result(self) -> None:
        self.ledger.add_branch("s1", "fan:a", "t1", "q", "41")
        assert self.ledger.finish_branch("s1", "fan:a", "t1", RESULT) is False  # not running yet
        self.ledger.claim_branch("s1", "fan:a", "t1", "w1")
        assert self.ledger.finish_branch("s1", "fan:a", "other", RESULT) is False
        assert self.ledger.finish_branch("s1", "fan:a", "t1", RESULT) is True
        entry = self.ledger.get_branch("s1", "fan:a")
        assert entry is not None and entry.state == "done" and dict(entry.result) == RESULT
        assert self.ledger.finish_branch("s1", "fan:a", "t1", {}) is False  # once

    def test_a_lost_branch_is_requeued_once_with_a_fresh_line(self) -> None:
        self.ledger.add_branch("s1", "fan:a", "t1", "q", "41")
        self.ledger.claim_branch("s1", "fan:a", "t1", "w1")
        wins = _race(6, lambda n: self.ledger.requeue_branch("s1", "fan:a", "t1", f"t-{n}", f"5{n}"))
        assert sum(wins) == 1
        entry = self.ledger.get_branch("s1", "fan:a")
        winner = wins.index(True)
        assert entry is not None and (entry.state, entry.task_id, entry.line) == ("queued", f"t-{winner}", f"5{winner}")
        assert entry.pickups == 1
        assert self.ledger.finish_branch("s1", "fan:a", "t1", RESULT) is False  # the lost runner's result is void

    def test_a_queued_branch_is_resent_once_under_a_new_task_id(self) -> None:
        self.ledger.add_branch("s1", "fan:a", "t1", "q", "41")
        wins = _race(6, lambda n: self.ledger.resend_branch("s1", "fan:a", "t1", f"t-{n}"))
        assert sum(wins) == 1
        entry = self.ledger.get_branch("s1", "fan:a")
        assert entry is not None and entry.state == "queued" and entry.task_id == f"t-{wins.index(True)}"
        assert entry.pickups == 0 and entry.line == "41"
        assert self.ledger.claim_branch("s1", "fan:a", "t1", "w1") is None  # the lost message's task is void
        self.ledger.claim_branch("s1", "fan:a", entry.task_id, "w1")
        assert self.ledger.resend_branch("s1", "fan:a", entry.task_id, "t-late") is False  # running: not resent

    def test_a_cancelled_branch_cannot_be_claimed(self) -> None:
        self.ledger.add_branch("s1", "fan:a", "t1", "q", "41")
        entry = self.ledger.cancel_branch("s1", "fan:a")
        assert entry is not None and entry.cancel_requested
        assert self.ledger.claim_branch("s1", "fan:a", "t1", "w1") is None
        assert self.ledger.cancel_branch("s1", "fan:zzz") is None

    def test_a_running_branch_sees_its_cancel_request(self) -> None:
        self.ledger.add_branch("s1", "fan:a", "t1", "q", "41")
        self.ledger.claim_branch("s1", "fan:a", "t1", "w1")
        self.ledger.cancel_branch("s1", "fan:a")
        entry = self.ledger.get_branch("s1", "fan:a")
        assert entry is not None and entry.cancel_requested and entry.state == "running"

    # workers ----------------------------------------------------------------------------------------------
    def test_a_heartbeat_is_kept_per_worker(self) -> None:
        self.ledger.beat(WorkerBeat("w1", ("q", "gpu"), 2, {"s1": "fleet"}))
        time.sleep(0.01)
        self.ledger.beat(WorkerBeat("w2", ("q",), 1))
        time.sleep(0.01)
        self.ledger.beat(WorkerBeat("w1", ("q", "gpu"), 2, {}))
        beats = self.ledger.workers()
        assert [beat.name for beat in beats] == ["w1", "w2"]
        first = beats[0]
        assert first.queues == ("q", "gpu") and first.concurrency == 2 and dict(first.running) == {}
        assert first.beat_at is not None and first.started_at is not None


def _race(count: int, attempt: Callable[[int], bool]) -> list[bool]:
    """Run `attempt(n)` for n in range(count) from as many threads at once; their answers in order of n."""
    answers: list[bool] = [False] * count
    gate = threading.Barrier(count)

    def one(n: int) -> None:
        gate.wait()
        answers[n] = bool(attempt(n))

    threads = [threading.Thread(target=one, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers


__all__ = ["FleetLedgerContract"]
