"""What travels between a session's runner and the worker that runs one of its branches: the branch task's
payload (`BranchAssignment`) and the result the worker leaves in the fleet's ledger (plain JSON both ways)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from attrs import field, frozen

from orchestra_core.engine.stage import BranchResult
from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.immutable import frozen_map, str_tuple
from orchestra_core.model.outcome import Outcome


class BadBranchTaskError(OrchestraError):
    """A branch task's payload or result is not what this Orchestra sends (another version, or damage)."""


@frozen
class BranchRepo:
    """One workspace repo of a branch: its git branch (on the remote), where it was forked, and the remote."""

    branch: str
    base_sha: str
    remote: str


@frozen(kw_only=True)
class BranchAssignment:
    """A branch task: which branch of which session, and everything the worker needs to run it as the session's
    runner would have.

    Attributes:
        session_id: The session (its main line).
        branch: The branch path.
        line: The session that records the branch's turns (a fork of the session made by its runner).
        node: The parallel node.
        edge: The branch's edge, by its position among the node's branch edges.
        stop_at: The join node.
        stage_keys: The stage keys of its nodes that other branches may run too.
        context: The context at the fan-out (plain JSON values).
        visited: The nodes the run ran before the fan-out.
        pipeline_path: The pipeline file, as the session recorded it.
        pipeline_blob: The pipeline's text in the store.
        repos: Each workspace repo's branch (none: the run has no workspace repos).
        auto_approve: Human gates in the branch take their default answers (else they fail: a worker has no one
            to ask).
        attempt: 1, then one more for every run after a lost worker.
        sent_by: The session's runner.
        single: Not a branch of a fan-out but one attempt of a main-line node that names this queue (`node`; `edge`
            is the index of the edge that led to it among the graph's edges, -1 for none).
    """

    session_id: str
    branch: str
    line: str
    node: str
    edge: int
    stop_at: str | None
    stage_keys: Mapping[str, str] = field(factory=dict, converter=frozen_map)
    context: Mapping[str, Any] = field(factory=dict, converter=frozen_map)
    visited: tuple[str, ...] = field(default=(), converter=str_tuple)
    pipeline_path: str = ""
    pipeline_blob: str = ""
    repos: Mapping[str, BranchRepo] = field(factory=dict, converter=frozen_map)
    auto_approve: bool = False
    attempt: int = 1
    sent_by: str = ""
    single: bool = False

    def to_payload(self) -> dict[str, Any]:
        """The task's payload (plain JSON)."""
        return {
            "session_id": self.session_id, "branch": self.branch, "line": self.line, "node": self.node,
            "edge": self.edge, "stop_at": self.stop_at, "stage_keys": dict(self.stage_keys),
            "context": plain_json(self.context), "visited": list(self.visited), "pipeline_path": self.pipeline_path,
            "pipeline_blob": self.pipeline_blob,
            "repos": {name: {"branch": r.branch, "base_sha": r.base_sha, "remote": r.remote} for name, r in self.repos.items()},
            "auto_approve": self.auto_approve, "attempt": self.attempt, "sent_by": self.sent_by, "single": self.single,
        }  # fmt: skip

    @classmethod
    def from_payload(cls, payload: Mapping[str, Any]) -> BranchAssignment:
        """Read a task's payload.

        Raises:
            BadBranchTaskError: It is not a branch assignment.
        """
        try:
            repos = {
                str(name): BranchRepo(str(repo["branch"]), str(repo["base_sha"]), str(repo["remote"]))
                for name, repo in dict(payload.get("repos") or {}).items()
            }
            stop_at = payload.get("stop_at")
            return cls(
                session_id=str(payload["session_id"]), branch=str(payload["branch"]), line=str(payload["line"]),
                node=str(payload["node"]), edge=int(payload["edge"]), stop_at=None if stop_at is None else str(stop_at),
                stage_keys={str(k): str(v) for k, v in dict(payload.get("stage_keys") or {}).items()},
                context=dict(payload.get("context") or {}), visited=tuple(payload.get("visited") or ()),
                pipeline_path=str(payload.get("pipeline_path") or ""), pipeline_blob=str(payload.get("pipeline_blob") or ""),
                repos=repos, auto_approve=bool(payload.get("auto_approve")), attempt=int(payload.get("attempt") or 1),
                sent_by=str(payload.get("sent_by") or ""), single=bool(payload.get("single")),
            )  # fmt: skip
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise BadBranchTaskError(f"not a branch task this Orchestra can run: {error!r}") from None


@frozen(kw_only=True)
class BranchOutcome:
    """What a worker reports for a branch: how it ended, the commit each repo's branch ended at (pushed to its
    remote), and who ran it."""

    result: BranchResult
    heads: Mapping[str, str] = field(factory=dict, converter=frozen_map)
    worker: str = ""


def result_payload(outcome: BranchOutcome) -> dict[str, Any]:
    """A branch's outcome as the plain JSON the ledger keeps."""
    result = outcome.result
    return {
        "branch_id": result.branch_id,
        "status": result.status,
        "outcome": result.outcome.to_status_json() if result.outcome is not None else None,
        "last_node": result.last_node,
        "completed_nodes": list(result.completed_nodes),
        "node_outcomes": {node: value.to_status_json() for node, value in result.node_outcomes.items()},
        "context_changes": plain_json(dict(result.context_changes)),
        "duration_s": result.duration_s,
        "heads": dict(outcome.heads),
        "worker": outcome.worker,
    }


def outcome_from_payload(payload: Mapping[str, Any]) -> BranchOutcome:
    """Read what `result_payload` wrote.

    Raises:
        BadBranchTaskError: It is not a branch result.
    """
    try:
        outcome = payload["outcome"]
        result = BranchResult(
            branch_id=str(payload["branch_id"]),
            status=str(payload["status"]),
            outcome=Outcome.from_status_json(outcome) if outcome is not None else None,
            last_node=payload.get("last_node"),
            completed_nodes=tuple(payload.get("completed_nodes") or ()),
            node_outcomes={node: Outcome.from_status_json(v) for node, v in dict(payload.get("node_outcomes") or {}).items()},
            context_changes=dict(payload.get("context_changes") or {}),
            duration_s=float(payload.get("duration_s") or 0.0),
        )
        return BranchOutcome(result=result, heads=dict(payload.get("heads") or {}), worker=str(payload.get("worker", "")))
    except (KeyError, TypeError, ValueError) as error:
        raise BadBranchTaskError(f"not a branch result this Orchestra reads: {error}") from None


def plain_json(values: Mapping[str, Any]) -> dict[str, Any]:
    """Context values as plain JSON (what is not JSON becomes its text), to travel through a broker and a ledger."""
    loaded: dict[str, Any] = json.loads(json.dumps(dict(values), default=str))
    return loaded


__all__ = [
    "BadBranchTaskError",
    "BranchAssignment",
    "BranchOutcome",
    "BranchRepo",
    "outcome_from_payload",
    "plain_json",
    "result_payload",
]
