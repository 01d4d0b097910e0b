"""The session runner's side of parallel branches on a fleet: send each branch of a main-line fan-out to the
workers of its queue, watch it in the ledger, run it again when its worker is lost, run it here when no worker took
it in time, and bring its commits back (fetched from the remote) before the join merges them as on one machine."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping
from contextlib import suppress
from datetime import UTC, datetime

from attrs import evolve

from orchestra_core.engine.remote_branches import BranchRequest
from orchestra_core.engine.stage import BranchResult, StageRun
from orchestra_core.model.context import Context
from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.graph import Edge, Graph, Node
from orchestra_core.model.outcome import Outcome, StageStatus
from orchestra_core.model.records import LifecycleEvent, PipelineLifecycle
from orchestra_core.model.settings import RepoSettings
from orchestra_core.ports.dispatcher import Task, TaskHandle
from orchestra_core.ports.fleet import BranchEntry, WorkerBeat
from orchestra_core.ports.git_remotes import GitRemotes
from orchestra_core.ports.session_locks import SessionLocks
from orchestra_core.ports.session_store import SessionStore
from orchestra_core.runs.fleet_payloads import (
    BadBranchTaskError,
    BranchAssignment,
    BranchOutcome,
    BranchRepo,
    outcome_from_payload,
    result_payload,
)
from orchestra_core.runs.ports import FleetPorts
from orchestra_core.session.api import append_record
from orchestra_core.session.checkpoints import PipelineSource
from orchestra_core.session.interrupted import interruption_of, open_nodes
from orchestra_core.session.recorder import SessionRecorder
from orchestra_core.workspace.branches import BranchWorktrees
from orchestra_core.workspace.naming import ref_component

LIVE_WORKER_S = 15.0  # a worker whose last heartbeat is older than this (three beats) is not counted as serving
LEDGER_PATIENCE_S = 30.0  # how long the watch of a branch goes on while the ledger cannot be read
# Handlers that only route or place branches: their `queue` says where their branches go, not where they run.
PLACE_ONLY_HANDLERS = frozenset({"start", "exit", "parallel", "parallel.fan_in", "conditional", "stack.manager_loop"})


class FleetBranches:
    """Runs the branches of a session's main-line fan-outs on the fleet (`RemoteBranches`), thread-safe."""

    def __init__(
        self,
        *,
        fleet: FleetPorts,
        session_id: str,
        graph: Graph,
        source: PipelineSource,
        store: SessionStore,
        recorder: SessionRecorder,
        locks: SessionLocks | None,
        worktrees: BranchWorktrees | None,
        repos: Mapping[str, RepoSettings],
        remotes: GitRemotes | None,
        auto_approve: bool,
    ) -> None:
        self.fleet = fleet
        self.session_id = session_id
        self.graph = graph
        self.source = source
        self.store = store
        self.recorder = recorder
        self.locks = locks
        self.worktrees = worktrees
        self.repos = repos
        self.remotes = remotes
        self.auto_approve = auto_approve

    def forks_every_branch(self, node: Node) -> bool:
        return True

    def queue_of(self, request: BranchRequest) -> str:
        """The queue a branch goes to: the one its nodes name (`queue="gpu"`), else the parallel node's, else the
        pipeline's (`graph [queue=...]`), else the default queue."""
        named = sorted({self.graph.nodes[n].get("queue") for n in request.nodes if n in self.graph.nodes} - {""})
        return (named[0] if named else "") or request.node.get("queue") or self.graph.get("queue") or self.fleet.default_queue

    def run(self, request: BranchRequest, here: Callable[[], BranchResult]) -> BranchResult:
        queue = self.queue_of(request)
        line = self.recorder.branch_sessions().get(request.branch)
        try:
            repos = self._publish(request.branch)
        except Exception as error:  # the branch cannot travel (a repo without a remote, a failed push)
            if queue in self.fleet.queues:
                return here()
            return failed(request, f"parallel branch {request.branch} cannot be sent to queue {queue!r}: {error}")
        if line is None:  # the run records nothing: nothing for a worker to record into
            return here()
        assignment = BranchAssignment(
            session_id=self.session_id, branch=request.branch, line=line, node=request.node.id, edge=request.index,
            stop_at=request.stop_at, stage_keys=request.stage_keys, context=request.context.snapshot(),
            visited=request.visited, pipeline_path=self.source.path or "", pipeline_blob=self.source.blob or "", repos=repos,
            auto_approve=self.auto_approve, sent_by=self.fleet.runner,
        )  # fmt: skip
        try:
            watch = _Watch(self, request, here, assignment, queue)
        except OrchestraError as error:  # the broker or the ledger failed: the branch runs here when it may
            with suppress(Exception):
                self.fleet.ledger.cancel_branch(self.session_id, request.branch)
            if queue in self.fleet.queues:
                return here()
            return failed(request, f"parallel branch {request.branch} could not be sent to queue {queue!r}: {error}")
        return watch.result()

    def runs_node(self, node: Node) -> bool:
        queue = node.get("queue")
        return bool(queue) and queue not in self.fleet.queues and node.handler_type not in PLACE_ONLY_HANDLERS

    def run_node(self, node: Node, context: Context, stage: StageRun) -> Outcome:
        """One attempt of a main-line node on a worker of its queue: in its own git branch (forked from the session
        branch, fetched back and merged into it) and its own line of the session, as a branch of one node."""
        queue = node.get("queue")
        path = f"{node.id}@{ref_component(queue, 'queue')}"
        line = self.recorder.open_line(path)
        if self.worktrees is not None:
            self.worktrees.fork(node.id, None, [path])
        edge = stage.incoming_edge
        index = self.graph.edges.index(edge) if edge is not None and edge in self.graph.edges else -1
        request = BranchRequest(
            node=node, start=edge or Edge(node.id, node.id), index=index, branch=path, nodes=frozenset({node.id}),
            stop_at=None, stage_keys={node.id: stage.stage_key}, context=context, visited=tuple(stage.completed_nodes),
            cancel=stage.cancel,
        )  # fmt: skip
        try:
            repos = self._publish(path)
        except Exception as error:
            self._drop(node, path)
            return Outcome.fail(f"node {node.id} cannot be sent to queue {queue!r}: {error}")
        assignment = BranchAssignment(
            session_id=self.session_id, branch=path, line=line, node=node.id, edge=index, stop_at=None,
            stage_keys=request.stage_keys, context=context.snapshot(), visited=request.visited,
            pipeline_path=self.source.path or "", pipeline_blob=self.source.blob or "", repos=repos,
            auto_approve=self.auto_approve, sent_by=self.fleet.runner, single=True,
        )  # fmt: skip
        result = _Watch(self, request, lambda: failed(request, "not run here"), assignment, queue).result()
        return self._merged(node, path, result, queue, line)

    def _merged(self, node: Node, path: str, result: BranchResult, queue: str, line: str) -> Outcome:
        """The node's outcome once its branch is merged into the session branch (a conflict fails it)."""
        outcome = result.outcome or Outcome.fail(result.failure_reason or f"node {node.id} did not run")
        if self.worktrees is not None:
            successful = result.status in (StageStatus.SUCCESS.value, StageStatus.PARTIAL_SUCCESS.value)
            report = self.worktrees.join(node.id, None, [path], [path] if successful else [])
            if report.failed:
                return Outcome.fail(f"node {node.id}: its work conflicts with the session branch: {report.summary()}")
        where = f"ran on queue {queue} (its turns in session {line})"
        return evolve(outcome, notes=f"{outcome.notes}; {where}" if outcome.notes else where)

    def _drop(self, node: Node, path: str) -> None:
        if self.worktrees is not None:
            with suppress(Exception):
                self.worktrees.join(node.id, None, [path], [])

    def _publish(self, branch: str) -> dict[str, BranchRepo]:
        """Push each repo's git branch of `branch` (still at its fork point) to the remote, for a worker to fetch.

        Raises:
            ValueError: A workspace repo has no remote or no GitRemotes port.
            RemoteError: A push failed.
        """
        session = self.worktrees.branch_session(branch) if self.worktrees is not None else None
        if session is None:
            return {}
        published = {}
        for name, context in session.contexts.items():
            url = self.repos[name].remote if name in self.repos else None
            if not url or self.remotes is None:
                raise ValueError(f"workspace.repos.{name} has no remote to send the branch through")
            found = self.remotes.remote_head(url, context.branch_name) or ""
            if found != context.base_sha:
                self.remotes.push(context.repo_root, url, context.base_sha, context.branch_name, expected_remote_sha=found)
            published[name] = BranchRepo(context.branch_name, context.base_sha, url)
        return published

    def adopt(self, branch: str, assignment: BranchAssignment, heads: Mapping[str, str]) -> None:
        """Fetch the commits each repo's branch ended at from its remote and move the branch here to them.

        Raises:
            RemoteError / WorkspaceError: A fetch failed, or the commit is not on the remote.
        """
        if self.worktrees is None or not heads:
            return
        session = self.worktrees.branch_session(branch)
        if session is None or self.remotes is None:
            return
        wanted = {}
        for name, sha in heads.items():
            repo = assignment.repos.get(name)
            context = session.contexts.get(name)
            if repo is None or context is None:
                continue
            fetched = self.remotes.fetch_branch(context.repo_root, repo.remote, repo.branch)
            if fetched != sha:
                raise ValueError(f"{name}: the remote's {repo.branch} is at {fetched or 'nothing'}, not at {sha}")
            wanted[name] = sha
        self.worktrees.adopt(branch, wanted)

    def note_lost(self, entry: BranchEntry, nodes: frozenset[str], new_line: str) -> None:
        """The branch's runner was lost: its line says so (its open nodes interrupted, then why it stopped)."""
        for record in open_nodes(self.store, entry.line):
            if record.node_id in nodes:
                append_record(self.store, entry.line, interruption_of(record))
        reason = (
            f"worker {entry.worker or '?'} was lost (its branch lock was freed without an end); parallel branch "
            f"{entry.branch} runs again from its start in session {new_line}"
        )
        append_record(self.store, entry.line, PipelineLifecycle(LifecycleEvent.INTERRUPTED, self.graph.name, error=reason))

    def live_workers(self, queue: str) -> list[WorkerBeat]:
        """The workers of `queue` that beat within the last LIVE_WORKER_S."""
        now = datetime.now(UTC)
        return [
            beat for beat in self.fleet.ledger.workers()
            if queue in beat.queues and beat.beat_at is not None and (now - beat.beat_at).total_seconds() < LIVE_WORKER_S
        ]  # fmt: skip


class _Watch:
    """One branch sent to the fleet, watched in the ledger until it has a result."""

    def __init__(
        self, branches: FleetBranches, request: BranchRequest, here: Callable[[], BranchResult],
        assignment: BranchAssignment, queue: str,
    ) -> None:  # fmt: skip
        self.branches = branches
        self.fleet = branches.fleet
        self.ledger = branches.fleet.ledger
        self.request = request
        self.here = here
        self.assignment = assignment
        self.queue = queue
        self.task_id = uuid.uuid4().hex
        self.cancelled = False
        self.ledger.add_branch(assignment.session_id, assignment.branch, self.task_id, queue, assignment.line)
        self._send()

    def _send(self) -> None:
        payload = self.assignment.to_payload()
        self.fleet.dispatcher.submit(Task("branch", self.assignment.session_id, self.queue, payload, self.task_id))
        self.queued_at = time.monotonic()
        self.live_checked_at = 0.0

    def _handle(self) -> TaskHandle:
        return TaskHandle(self.task_id, "branch", self.assignment.session_id, self.queue)

    def result(self) -> BranchResult:
        failures = 0
        while True:
            try:
                entry = self.ledger.get_branch(self.assignment.session_id, self.assignment.branch)
            except OrchestraError as error:  # the ledger's database hiccuped: try again, for a while
                failures += 1
                if failures * self.fleet.poll_s >= LEDGER_PATIENCE_S:
                    return failed(self.request, f"the fleet's ledger could not be read: {error}")
                time.sleep(self.fleet.poll_s)
                continue
            failures = 0
            if entry is None or entry.task_id != self.task_id:
                return failed(self.request, f"the fleet's entry of parallel branch {self.assignment.branch} was replaced")
            found = self._step(entry)
            if found is not None:
                return found
            time.sleep(self.fleet.poll_s)

    def _step(self, entry: BranchEntry) -> BranchResult | None:
        if entry.state == "done":
            return self._done(entry)
        if self.request.cancel.is_set():
            return self._cancel(entry)
        if entry.state == "queued":
            return self._waiting()
        if self._lost(entry):
            self._run_again(entry)
        return None

    def _done(self, entry: BranchEntry) -> BranchResult:
        try:
            outcome = outcome_from_payload(entry.result)
        except BadBranchTaskError as error:
            return failed(self.request, str(error))
        if outcome.result.status in (StageStatus.SUCCESS.value, StageStatus.PARTIAL_SUCCESS.value):
            try:
                self.branches.adopt(self.assignment.branch, self.assignment, outcome.heads)
            except Exception as error:
                return failed(self.request, f"the commits of parallel branch {self.assignment.branch} could not be fetched: {error}")
        return outcome.result

    def _cancel(self, entry: BranchEntry) -> BranchResult | None:
        """The branch is no longer wanted: a queued one never starts, a running one is asked to stop."""
        if not self.cancelled:
            self.cancelled = True
            self.ledger.cancel_branch(self.assignment.session_id, self.assignment.branch)
            with suppress(Exception):
                self.fleet.dispatcher.cancel(self._handle())
        if entry.state == "queued" or self._lost(entry):
            return BranchResult(self.request.start.target, StageStatus.SKIPPED.value, None, None, ())
        return None

    def _waiting(self) -> BranchResult | None:
        """Nobody took the branch yet: after `claim_after_s` this process runs it, when it serves the queue; a
        branch of a queue no live worker serves fails after `no_worker_grace_s`."""
        waited = time.monotonic() - self.queued_at
        if waited < self.fleet.claim_after_s:
            return None
        if self.queue in self.fleet.queues:
            return self._run_here()
        if waited < max(self.fleet.claim_after_s, self.fleet.no_worker_grace_s):
            return None
        if time.monotonic() - self.live_checked_at < min(LIVE_WORKER_S / 3, self.fleet.no_worker_grace_s):
            return None
        self.live_checked_at = time.monotonic()
        serving = self.branches.live_workers(self.queue)
        if serving:
            if waited >= self.fleet.resend_after_s and any(len(b.running) < b.concurrency for b in serving):
                self._resend()  # a worker of its queue is idle, yet nobody took it: its message was lost
            return None
        self.ledger.cancel_branch(self.assignment.session_id, self.assignment.branch)
        with suppress(Exception):
            self.fleet.dispatcher.cancel(self._handle())
        return failed(
            self.request,
            f"no live worker serves queue {self.queue!r} for parallel branch {self.assignment.branch} "
            f"(start one with: orchestra worker --queue {self.queue})",
        )

    def _resend(self) -> None:
        task_id = uuid.uuid4().hex
        if self.ledger.resend_branch(self.assignment.session_id, self.assignment.branch, self.task_id, task_id):
            with suppress(Exception):
                self.fleet.dispatcher.cancel(self._handle())
            self.task_id = task_id
            self._send()

    def _run_here(self) -> BranchResult | None:
        claimed = self.ledger.claim_branch(self.assignment.session_id, self.assignment.branch, self.task_id, self.fleet.runner)
        if claimed is None:
            return None  # a worker took it meanwhile
        with suppress(Exception):
            self.fleet.dispatcher.cancel(self._handle())
        result = self.here()
        outcome = BranchOutcome(result=result, worker=self.fleet.runner)
        self.ledger.finish_branch(self.assignment.session_id, self.assignment.branch, self.task_id, result_payload(outcome))
        return result

    def _lost(self, entry: BranchEntry) -> bool:
        """A running branch whose line's lock is free lost its runner (the runner holds it until it finished)."""
        locks = self.branches.locks
        if entry.state != "running" or locks is None or entry.worker == self.fleet.runner:
            return False
        if locks.holder(entry.line) is not None:
            return False
        again = self.ledger.get_branch(entry.session_id, entry.branch)
        return again is not None and again.state == "running" and again.task_id == entry.task_id

    def _run_again(self, entry: BranchEntry) -> None:
        """Send the branch again from its start, recorded in a fresh line; the lost line says why."""
        task_id = uuid.uuid4().hex

        def requeue(line: str) -> bool:  # fails when the branch ended or was sent again meanwhile: nothing to do
            return self.ledger.requeue_branch(entry.session_id, entry.branch, entry.task_id, task_id, line)

        new_line = self.branches.recorder.rerun_line(entry.branch, self.request.node.id, self.request.start.target, requeue)
        if new_line is None:
            return
        with suppress(Exception):
            self.branches.note_lost(entry, self.request.nodes, new_line)
        self.task_id = task_id
        self.assignment = evolve(self.assignment, line=new_line, attempt=self.assignment.attempt + 1)
        self._send()


def failed(request: BranchRequest, reason: str) -> BranchResult:
    """A branch that could not run (or whose work could not be brought back)."""
    return BranchResult(request.start.target, StageStatus.FAIL.value, Outcome.fail(reason), None, ())


__all__ = ["FleetBranches", "failed"]
