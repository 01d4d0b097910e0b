"""Conversion between the engine's Checkpoint and its stored form, the `dev.orchestra.Checkpoint` record."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from attrs import evolve, frozen

from orchestra_core.model.checkpoint import Checkpoint, RunStatus
from orchestra_core.model.outcome import Outcome
from orchestra_core.model.outcome_map import OutcomeMap
from orchestra_core.model.records import CheckpointRecord, RepoSnapshot, WorkspaceSnapshot

_INT_MIN, _INT_MAX = -(2**63), 2**64 - 1  # what the stores' msgpack holds


@frozen
class RepoHead:
    """A workspace repo's session branch at a checkpoint."""

    branch: str
    sha: str
    base_sha: str = ""


@frozen
class PipelineSource:
    """Where a run's pipeline came from: its file and the blob holding the DOT text as it ran."""

    path: str | None = None
    blob: str | None = None


def to_record(
    checkpoint: Checkpoint,
    *,
    repos: Mapping[str, RepoHead] | None = None,
    source: PipelineSource | None = None,
    plain_outcome: Callable[[str, Outcome], Outcome] | None = None,
) -> CheckpointRecord:
    """The stored form of an engine checkpoint, with every workspace repo's head and the pipeline source
    (`plain_outcome` may hand back outcomes it made storable before)."""
    source = source or PipelineSource()
    plain = plain_outcome or (lambda _node, outcome: _plain_outcome(outcome))
    return CheckpointRecord(
        current_node=checkpoint.current_node,
        completed_nodes=checkpoint.completed_nodes,
        context_snapshot=plain_values(checkpoint.context),
        retry_counters=dict(checkpoint.node_retries),
        node_outcomes={node: plain(node, outcome) for node, outcome in checkpoint.node_outcomes.items()},
        logs=checkpoint.logs,
        next_node=checkpoint.next_node,
        run_status=checkpoint.status.value,
        failure_reason=checkpoint.failure_reason,
        node_visits=checkpoint.node_visits,
        loop_restarts=checkpoint.loop_restarts,
        workspace_snapshot=_snapshot(checkpoint, repos) if repos else None,
        pipeline_path=source.path,
        pipeline_blob=source.blob,
    )


def from_record(record: CheckpointRecord, created_at: datetime | None) -> Checkpoint:
    """The engine checkpoint a stored record describes (to resume or replay from it)."""
    snapshot = record.workspace_snapshot.sha_by_repo() if record.workspace_snapshot else {}
    return Checkpoint(
        current_node=record.current_node,
        completed_nodes=record.completed_nodes,
        node_outcomes=record.node_outcomes,
        node_retries=record.retry_counters,
        context=record.context_snapshot,
        timestamp=created_at or datetime.now(UTC),
        next_node=record.next_node,
        status=RunStatus(record.run_status),
        failure_reason=record.failure_reason,
        logs=record.logs,
        workspace_snapshot=snapshot,
        node_visits=record.node_visits,
        loop_restarts=record.loop_restarts,
    )


def repo_heads(record: CheckpointRecord) -> dict[str, RepoHead]:
    """Each workspace repo's branch and head as the checkpoint recorded them."""
    if record.workspace_snapshot is None:
        return {}
    return {
        repo.repo_name: RepoHead(repo.branch, repo.git_sha, repo.base_sha or "")
        for repo in record.workspace_snapshot.repo_snapshots
    }


def plain_values(values: Mapping[str, Any]) -> dict[str, Any]:
    """Context values reduced to what every store can hold: JSON types with integers that fit in 64 bits;
    anything else (other objects, larger integers) as its text, as the run directory's JSON would show it."""
    try:
        plain: dict[str, Any] = json.loads(json.dumps(dict(values), default=str), parse_int=_stored_int)
        return plain
    except (TypeError, ValueError):
        return {str(key): str(value) for key, value in values.items()}


def _stored_int(text: str) -> int | str:
    number = int(text)
    return number if _INT_MIN <= number <= _INT_MAX else text


def _plain_outcome(outcome: Outcome) -> Outcome:
    updates = outcome.context_updates
    if not updates or _already_plain(updates):
        return outcome  # kept as it is, not copied: a long run holds one outcome per node
    return evolve(outcome, context_updates=plain_values(updates))


def _already_plain(values: Mapping[str, Any]) -> bool:
    """Whether `plain_values` would give the same values back (string keys; strings, floats, flags, None and
    64-bit integers), without the JSON round trip."""
    for key, value in values.items():
        if type(key) is not str:
            return False
        kind = type(value)
        if kind is int:
            if not _INT_MIN <= value <= _INT_MAX:
                return False
        elif kind not in (str, float, bool, type(None)):
            return False
    return True


def _snapshot(checkpoint: Checkpoint, repos: Mapping[str, RepoHead]) -> WorkspaceSnapshot:
    heads = checkpoint.workspace_snapshot
    return WorkspaceSnapshot(
        repo_snapshots=tuple(
            RepoSnapshot(name, heads.get(name, head.sha), head.branch, head.base_sha or None)
            for name, head in sorted(repos.items())
        ),
        node_id=checkpoint.current_node or None,
    )


# A full checkpoint after this many deltas bounds the work of reading one back (one page or two of
# history) while keeping the cost of writing fulls small next to the deltas.
FULL_EVERY = 256
# A full checkpoint restates every completed node, so on long runs fulls come at most once per this share of
# the completed nodes: their cost per node stays flat (a full every 256 nodes made a node of a 10,000-node run
# cost more than one of a 1,000-node run), at the price of longer delta chains to read back.
FULL_SHARE = 4


class CheckpointDeltas:
    """Turns each engine checkpoint of a run into a stored record that holds only what changed.

    Completed nodes, node outcomes, the context and the run log grow with every node, so writing them
    whole after each node stores O(n^2) data over a long run. A delta records the appended nodes and log
    lines, the changed outcomes and the changed or removed context keys against the checkpoint in
    `base_turn_id`; every `full_every`-th checkpoint, and any that is not a simple continuation (a loop
    restart), is written whole. `expand_checkpoint` rebuilds the full record.

    The workspace snapshot (every repo's head) is in a delta only when some head (or branch) changed since
    the last snapshot recorded, so a read-only node's checkpoint has none; a full record always holds it,
    so expanding a checkpoint finds its snapshot within its own delta chain.
    """

    def __init__(self, full_every: int = FULL_EVERY) -> None:
        self._full_every = max(full_every, 1)
        self._previous: Checkpoint | None = None
        self._previous_turn: str | None = None
        self._chain = 0
        self._snapshot: frozenset[tuple[str, str, str]] | None = None
        self._plain: dict[str, tuple[Outcome, Outcome]] = {}

    def continue_from(self, repos: Mapping[str, RepoHead]) -> None:
        """A resumed run: its workspace was restored to these heads, the last snapshot recorded."""
        self._snapshot = frozenset((name, head.sha, head.branch) for name, head in repos.items()) if repos else None

    def record(
        self,
        checkpoint: Checkpoint,
        *,
        repos: Mapping[str, RepoHead] | None = None,
        source: PipelineSource | None = None,
    ) -> CheckpointRecord:
        """The record to append for this checkpoint (a delta when possible)."""
        previous = self._previous
        every = max(self._full_every, len(checkpoint.completed_nodes) // FULL_SHARE)
        if previous is None or self._previous_turn is None or self._chain + 1 >= every:
            return to_record(checkpoint, repos=repos, source=source, plain_outcome=self._plain_outcome)
        if (
            checkpoint.loop_restarts != previous.loop_restarts
            or not _extends(checkpoint.completed_nodes, previous.completed_nodes)
            or not _extends(checkpoint.logs, previous.logs)
        ):
            return to_record(checkpoint, repos=repos, source=source, plain_outcome=self._plain_outcome)
        added, removed = _context_changes(checkpoint.context, previous.context)
        unchanged = repos is not None and bool(repos) and _snapshot_key(_snapshot(checkpoint, repos)) == self._snapshot
        full = to_record(
            _delta_view(checkpoint, previous, added), repos=None if unchanged else repos, source=source,
            plain_outcome=self._plain_outcome,
        )
        return evolve(
            full, base_turn_id=self._previous_turn, context_removed=removed, chain_length=self._chain + 1
        )

    def _plain_outcome(self, node: str, outcome: Outcome) -> Outcome:
        """The storable outcome, made once per outcome: a full record restates every node's (issue 16). Only
        copies are kept: an outcome already storable (most) is its own storable form, and checking that costs
        less than a long run holding an entry per node (issue 33)."""
        known = self._plain.get(node)
        if known is not None and known[0] is outcome:
            return known[1]
        plain = _plain_outcome(outcome)
        if plain is outcome:
            self._plain.pop(node, None)
        else:
            self._plain[node] = (outcome, plain)
        return plain

    def remember(self, checkpoint: Checkpoint, record: CheckpointRecord, turn_id: str) -> bool:
        """Note the checkpoint just stored, as the base of the next delta; True when it recorded a snapshot
        that differs from the last one (a full record restating the same heads is not a new snapshot)."""
        self._previous, self._previous_turn, self._chain = checkpoint, turn_id, record.chain_length
        if record.workspace_snapshot is None:
            return False
        key, self._snapshot = self._snapshot, _snapshot_key(record.workspace_snapshot)
        return key != self._snapshot


def _snapshot_key(snapshot: WorkspaceSnapshot) -> frozenset[tuple[str, str, str]]:
    return frozenset((repo.repo_name, repo.git_sha, repo.branch) for repo in snapshot.repo_snapshots)


def expand_checkpoint(record: CheckpointRecord, base_of: Callable[[str], CheckpointRecord]) -> CheckpointRecord:
    """The full checkpoint a (possibly delta) record stands for.

    Args:
        record: A stored checkpoint record.
        base_of: Reads the checkpoint record stored in a turn (by turn id).
    """
    chain = [record]
    while chain[-1].base_turn_id is not None:
        chain.append(base_of(chain[-1].base_turn_id))
    full = chain.pop()
    for delta in reversed(chain):
        full = _apply(full, delta)
    return full


def _apply(base: CheckpointRecord, delta: CheckpointRecord) -> CheckpointRecord:
    context = {k: v for k, v in base.context_snapshot.items() if k not in set(delta.context_removed)}
    context.update(delta.context_snapshot)
    return evolve(
        delta,
        workspace_snapshot=delta.workspace_snapshot or _carried(base.workspace_snapshot, delta.current_node),
        completed_nodes=base.completed_nodes + delta.completed_nodes,
        node_outcomes={**base.node_outcomes, **delta.node_outcomes},
        context_snapshot=context,
        logs=base.logs + delta.logs,
        base_turn_id=None,
        context_removed=(),
        chain_length=0,
    )


def _carried(snapshot: WorkspaceSnapshot | None, node: str) -> WorkspaceSnapshot | None:
    """A delta without a snapshot: no head moved since its base, whose snapshot holds here too."""
    return evolve(snapshot, node_id=node or None) if snapshot is not None else None


def _extends(items: tuple[str, ...], prefix: tuple[str, ...]) -> bool:
    """Whether `items` (a run's completed nodes or log lines) continues `prefix`, those of its previous checkpoint.

    Checked at the prefix's end, in O(1): between two checkpoints of a run the engine only appends to both
    (a loop restart, which starts them over, is itself checkpointed with neither, and `record` writes a full
    record when the restart count changed), so a sequence at least as long with the prefix's last item in its
    place continues it. Comparing them whole made the cost per node grow with the run (issue 16).
    """
    if len(items) < len(prefix):
        return False
    return not prefix or items[len(prefix) - 1] == prefix[-1]


def _context_changes(current: Mapping[str, Any], previous: Mapping[str, Any]) -> tuple[dict[str, Any], tuple[str, ...]]:
    added = {key: value for key, value in current.items() if key not in previous or not _same(previous[key], value)}
    removed = tuple(key for key in previous if key not in current)
    return added, removed


def _same(old: Any, new: Any) -> bool:
    """Equal as stored: Python's `1 == True == 1.0` and `[1] == [True]` would hide a change of type."""
    if old is new:
        return True
    if type(old) is not type(new):
        return False
    if isinstance(old, Mapping):
        return old.keys() == new.keys() and all(_same(old[key], new[key]) for key in old)
    if isinstance(old, list | tuple):
        return len(old) == len(new) and all(_same(a, b) for a, b in zip(old, new, strict=True))
    return bool(old == new)


def _changed_outcomes(current: Any, previous: Any) -> dict[str, Any]:
    # The engine's OutcomeMap knows the entries set since the map it was derived from.
    if isinstance(current, OutcomeMap) and isinstance(previous, OutcomeMap):
        changed = current.changes_since(previous)
        if changed is not None:
            return {node: current[node] for node in changed if previous.get(node) is not current[node]}
    return {node: outcome for node, outcome in current.items() if previous.get(node) is not outcome}


def _delta_view(checkpoint: Checkpoint, previous: Checkpoint, added: dict[str, Any]) -> Checkpoint:
    return evolve(
        checkpoint,
        completed_nodes=checkpoint.completed_nodes[len(previous.completed_nodes) :],
        node_outcomes=_changed_outcomes(checkpoint.node_outcomes, previous.node_outcomes),
        context=added,
        logs=checkpoint.logs[len(previous.logs) :],
    )
